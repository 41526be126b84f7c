// Reads every .log segment of a partition directory with Kafka's own record
// classes (FileRecords, RecordBatch) and prints each batch and record on one
// line, so a test can check that files written by another implementation
// decode in Kafka exactly as intended. Every batch's CRC is verified
// (ensureValid); any decoding failure exits 1 with the error on stderr.
//
// Usage: DumpRecords <partition-dir>
// Output, tab-separated:
//   batch   baseOffset lastOffset compression timestampType maxTimestamp
//           producerId producerEpoch baseSequence isTransactional isControl
//           partitionLeaderEpoch recordCount position segmentBaseOffset
//   record  offset timestamp key value headers
// key/value are base64 or "-" for null; headers are "-" or comma-separated
// base64(name):base64(value) with "-" for a null value (ProduceRecords' format).
// A trailing "end <segmentBaseOffset> <validBytes> <fileBytes>" line closes
// each segment.

import java.io.File;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Base64;
import java.util.StringJoiner;

import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.record.internal.FileLogInputStream.FileChannelRecordBatch;
import org.apache.kafka.common.record.internal.FileRecords;
import org.apache.kafka.common.record.internal.Record;

public final class DumpRecords {
    public static void main(String[] args) throws Exception {
        File[] segments = new File(args[0]).listFiles((d, name) -> name.endsWith(".log"));
        if (segments == null) throw new IllegalArgumentException("not a directory: " + args[0]);
        Arrays.sort(segments);
        StringBuilder out = new StringBuilder();
        for (File segment : segments) dumpSegment(segment, out);
        System.out.print(out);
    }

    private static void dumpSegment(File segment, StringBuilder out) throws Exception {
        long segmentBaseOffset = Long.parseLong(segment.getName().split("\\.")[0]);
        try (FileRecords records = FileRecords.open(segment, false)) {
            long position = 0;
            for (FileChannelRecordBatch batch : records.batches()) {
                batch.ensureValid();
                out.append(String.join("\t", "batch", "" + batch.baseOffset(), "" + batch.lastOffset(),
                    batch.compressionType().name, batch.timestampType().name, "" + batch.maxTimestamp(),
                    "" + batch.producerId(), "" + batch.producerEpoch(), "" + batch.baseSequence(),
                    "" + batch.isTransactional(), "" + batch.isControlBatch(), "" + batch.partitionLeaderEpoch(),
                    "" + batch.countOrNull(), "" + position, "" + segmentBaseOffset)).append('\n');
                for (Record record : batch) {
                    record.ensureValid();
                    out.append(String.join("\t", "record", "" + record.offset(), "" + record.timestamp(),
                        base64(record.key()), base64(record.value()), headers(record.headers()))).append('\n');
                }
                position += batch.sizeInBytes();
            }
            out.append(String.join("\t", "end", "" + segmentBaseOffset, "" + position, "" + records.sizeInBytes()))
                .append('\n');
        }
    }

    private static String base64(ByteBuffer buffer) {
        if (buffer == null) return "-";
        byte[] bytes = new byte[buffer.remaining()];
        buffer.duplicate().get(bytes);
        return Base64.getEncoder().encodeToString(bytes);
    }

    private static String headers(Header[] headers) {
        if (headers.length == 0) return "-";
        StringJoiner joined = new StringJoiner(",");
        for (Header h : headers) {
            String name = Base64.getEncoder().encodeToString(h.key().getBytes(StandardCharsets.UTF_8));
            String value = h.value() == null ? "-" : Base64.getEncoder().encodeToString(h.value());
            joined.add(name + ":" + value);
        }
        return joined.toString();
    }
}

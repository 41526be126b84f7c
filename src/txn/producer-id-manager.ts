/**
 * Hands out producer ids for InitProducerId (Kafka's RPCProducerIdManager).
 *
 * Producer ids are allocated cluster-wide by the controller in blocks
 * (ProducerIdsRecord in __cluster_metadata, 1000 ids per block as in Kafka),
 * so two brokers never hand out the same id and a restart never reuses one.
 * This broker serves ids from its current block and asks for the next block
 * once 90% of the current one is used, so InitProducerId rarely waits on the
 * controller. If no id is available and the request for a block fails, the
 * caller gets COORDINATOR_LOAD_IN_PROGRESS (retriable), as Kafka answers.
 */
import { ErrorCode } from '../protocol/errors.js';

/** A range of producer ids: [firstProducerId, firstProducerId + size). */
export interface ProducerIdBlock {
  firstProducerId: number;
  size: number;
}

/** Where blocks come from: the controller (a metadata record through the quorum). */
export interface ProducerIdBlockSource {
  allocateProducerIdBlock(brokerId: number): Promise<ProducerIdBlock>;
}

/** Share of a block used before the next one is requested (Kafka's PREFETCH_PERCENT). */
export const PREFETCH_PERCENT = 90;

export type ProducerIdResult = { producerId: number; errorCode: typeof ErrorCode.NONE } | { producerId: -1; errorCode: number; message: string };

export class ProducerIdManager {
  private current: ProducerIdBlock | null = null;
  private nextProducerId = 0;
  private prefetched: ProducerIdBlock | null = null;
  private inFlight: Promise<void> | null = null;
  private lastError: string | null = null;

  constructor(
    private readonly brokerId: number,
    private readonly source: ProducerIdBlockSource,
  ) {}

  /** The next unused producer id, fetching a block from the controller when needed. */
  async generateProducerId(): Promise<ProducerIdResult> {
    for (let attempt = 0; attempt < 2; attempt++) {
      const id = this.takeFromBlocks();
      if (id !== null) return { producerId: id, errorCode: ErrorCode.NONE };
      await this.requestNextBlock();
    }
    return { producerId: -1, errorCode: ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, message: `no producer id block available: ${this.lastError ?? 'allocation pending'}` };
  }

  private takeFromBlocks(): number | null {
    if (this.current === null || this.nextProducerId >= this.current.firstProducerId + this.current.size) {
      if (this.prefetched === null) return null;
      this.current = this.prefetched;
      this.prefetched = null;
      this.nextProducerId = this.current.firstProducerId;
    }
    const id = this.nextProducerId++;
    const used = this.nextProducerId - this.current.firstProducerId;
    if (this.prefetched === null && used * 100 >= this.current.size * PREFETCH_PERCENT) void this.requestNextBlock();
    return id;
  }

  /** Requests one block unless a request is already in flight; never rejects. */
  private requestNextBlock(): Promise<void> {
    if (this.prefetched !== null) return Promise.resolve();
    this.inFlight ??= this.source.allocateProducerIdBlock(this.brokerId).then(
      (block) => {
        if (!(block.size > 0 && Number.isSafeInteger(block.firstProducerId + block.size))) throw new Error(`controller returned an invalid producer id block ${JSON.stringify(block)}`);
        this.prefetched = block;
        this.lastError = null;
        this.inFlight = null;
      },
      (error: unknown) => {
        this.lastError = error instanceof Error ? error.message : String(error);
        this.inFlight = null;
      },
    );
    return this.inFlight;
  }
}

/**
 * Bad flag combinations for `spool share-groups` and the message Kafka 4.4's
 * kafka-share-groups.sh gives for each (ShareGroupCommandOptions.checkArgs,
 * joptsimple's availableIf, the one-action rule), shared by the unit test
 * (share-groups.test.ts) and the comparison with Kafka's own tool
 * (share-groups-kafka.test.ts).
 */
export const ARGUMENT_ERRORS: readonly (readonly [string[], string])[] = [
  [['--members', '--verbose'], 'Option(s) [members, verbose] are unavailable given other options on the command line'],
  [['--list', '--offsets'], 'Option(s) [offsets] are unavailable given other options on the command line'],
  [['--delete', '--group', 'g', '--state'], 'Option(s) [state] are unavailable given other options on the command line'],
  [['--describe'], 'Option [describe] takes one of these options: [all-groups], [group]'],
  [['--describe', '--group', 'g', '--members', '--offsets'], 'Option [describe] takes at most one of these options: [members], [offsets], [state]'],
  [['--describe', '--group', 'g', '--state', 'Stable'], 'Option [describe] does not take a value for [state]'],
  [['--delete'], 'Option [delete] takes the options [group] or [all-groups].'],
  [['--delete', '--group', 'g', '--all-groups'], 'Option [delete] takes either [group] or [all-groups], not both.'],
  [['--delete', '--group', 'g', '--topic', 't'], 'Option [delete] does not take the options [topic] or [all-topics].'],
  [['--delete-offsets', '--group', 'g'], 'Option [delete-offsets] takes the following options: [group], [topic]'],
  [['--reset-offsets', '--group', 'g', '--topic', 't', '--to-earliest', '--dry-run', '--execute'], 'Option [reset-offsets] only accepts one of [execute] and [dry-run]'],
  [['--reset-offsets', '--group', 'g', '--topic', 't', '--to-earliest'], 'Option [reset-offsets] takes the option: [execute] or [dry-run]'],
  [['--reset-offsets', '--topic', 't', '--to-earliest', '--dry-run'], 'Option [reset-offsets] takes the option: [group]'],
  [['--reset-offsets', '--group', 'g', '--to-earliest', '--dry-run'], 'Option [reset-offsets] takes one of these options: [all-topics], [from-file], [topic]'],
  [['--reset-offsets', '--group', 'g', '--topic', 't', '--all-topics', '--to-earliest', '--dry-run'], 'Option "[topic]" can\'t be used with option "[all-topics]"'],
  [['--reset-offsets', '--group', 'g', '--topic', 't', '--from-file', 'plan.csv', '--dry-run'], 'Option "[topic]" can\'t be used with option "[from-file]"'],
  [['--reset-offsets', '--group', 'g', '--topic', 't', '--dry-run'], 'Option [reset-offsets] takes one of these options: [from-file], [to-current], [to-datetime], [to-earliest], [to-latest], [to-offset]'],
  [['--reset-offsets', '--group', 'g', '--topic', 't', '--to-latest', '--to-earliest', '--dry-run'], 'Option "[to-earliest]" can\'t be used with option "[to-latest]"'],
  [['--reset-offsets', '--group', 'g', '--topic', 't', '--to-offset', '3', '--to-current', '--dry-run'], 'Option "[to-offset]" can\'t be used with option "[to-current]"'],
  [['--list', '--group', 'g'], 'Option "[group]" can\'t be used with option "[list]"'],
  [['--describe', '--group', 'g', '--all-groups'], 'Option "[group]" can\'t be used with option "[all-groups]"'],
  [['--describe', '--group', 'g', '--topic', 't'], 'Option "[topic]" can\'t be used with option "[describe]"'],
  [['--group', 'g'], 'Command must include exactly one action: --list, --describe, --delete, --reset-offsets, --delete-offsets.'],
  [['--list', '--delete-offsets', '--group', 'g', '--topic', 't'], 'Option "[group]" can\'t be used with option "[list]"'],
  [['--describe', '--all-groups', '--delete-offsets'], 'Option [delete-offsets] takes the following options: [group], [topic]'],
];

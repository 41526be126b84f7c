/**
 * A minimal leveled logger writing to stderr; the level comes from
 * SPOOL_LOG_LEVEL (error, warn, info, debug) and defaults to info.
 */
export interface Logger {
  error(message: string): void;
  warn(message: string): void;
  info(message: string): void;
  debug(message: string): void;
}

const LEVELS = { error: 0, warn: 1, info: 2, debug: 3 } as const;
type Level = keyof typeof LEVELS;

export function createLogger(options: { name: string; level?: Level; sink?: (line: string) => void }): Logger {
  const threshold = LEVELS[options.level ?? (process.env.SPOOL_LOG_LEVEL as Level | undefined) ?? 'info'] ?? LEVELS.info;
  const sink = options.sink ?? ((line: string) => process.stderr.write(line + '\n'));
  const emit = (level: Level, message: string) => {
    if (LEVELS[level] <= threshold) sink(`[${level.toUpperCase()}] ${options.name}: ${message}`);
  };
  return {
    error: (message) => emit('error', message),
    warn: (message) => emit('warn', message),
    info: (message) => emit('info', message),
    debug: (message) => emit('debug', message),
  };
}

export const silentLogger: Logger = { error() {}, warn() {}, info() {}, debug() {} };

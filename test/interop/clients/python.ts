/**
 * Runs a Python driver from test/interop/python/ with Debian's /usr/bin/python3
 * (where python3-confluent-kafka and python3-kafka are installed), and tells
 * whether its modules are importable.
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runDriver, type Spec } from './scenario.js';

export const PYTHON = '/usr/bin/python3';
const PYTHON_DIR = fileURLToPath(new URL('../../../../test/interop/python/', import.meta.url));

export function pythonHas(modules: readonly string[]): boolean {
  try {
    execFileSync(PYTHON, ['-c', `import ${modules.join(', ')}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

export function runPythonDriver<T>(script: string, spec: Spec, specPath: string): Promise<T> {
  return runDriver<T>(PYTHON, [join(PYTHON_DIR, script)], spec, specPath);
}

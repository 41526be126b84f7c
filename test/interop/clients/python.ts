/**
 * Runs a Python driver from test/interop/python/ with a given interpreter, and
 * tells whether an interpreter imports some modules. Two interpreters:
 *  - Debian's /usr/bin/python3, with python3-confluent-kafka (librdkafka 2.0)
 *    and python3-kafka (test/interop/python/ci-setup.sh);
 *  - the venv of test/interop/groups/ci-setup.sh, with confluent-kafka from
 *    PyPI (pinned there; its wheel bundles a current librdkafka).
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runDriver, type Spec } from './scenario.js';

export const DEBIAN_PYTHON = '/usr/bin/python3';
export const PYPI_PYTHON = fileURLToPath(new URL('../../../../test/interop/groups/venv/bin/python3', import.meta.url));
const PYTHON_DIR = fileURLToPath(new URL('../../../../test/interop/python/', import.meta.url));

export function pythonHas(modules: readonly string[], python: string = DEBIAN_PYTHON): boolean {
  try {
    execFileSync(python, ['-c', `import ${modules.join(', ')}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

export function runPythonDriver<T>(script: string, spec: Spec, specPath: string, options: { python?: string } = {}): Promise<T> {
  return runDriver<T>(options.python ?? DEBIAN_PYTHON, [join(PYTHON_DIR, script)], spec, specPath);
}

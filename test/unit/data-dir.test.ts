import { mkdtemp, stat, writeFile, chmod, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { prepareDataDir } from '../../infra/local/start-checks.ts';

// DATA_DIR holds key hashes, usage identifiers and orders: nobody but its owner may read them.
describe('DATA_DIR', () => {
  it('is created 0700', async () => {
    const root = await mkdtemp(join(tmpdir(), 'data-dir-'));
    const path = await prepareDataDir(join(root, 'new/data'));
    expect((await stat(path)).mode & 0o777).toBe(0o700);
  });

  it('is made private when it already exists open to others, and so are the files an earlier run left in it', async () => {
    const root = await mkdtemp(join(tmpdir(), 'data-dir-'));
    const path = join(root, 'old');
    await mkdir(path);
    await chmod(path, 0o755);
    await writeFile(join(path, 'shared-local-instance.db'), 'tables');
    await chmod(join(path, 'shared-local-instance.db'), 0o644);
    await prepareDataDir(path);
    expect((await stat(path)).mode & 0o777).toBe(0o700);
    expect((await stat(join(path, 'shared-local-instance.db'))).mode & 0o777).toBe(0o600);
  });
});

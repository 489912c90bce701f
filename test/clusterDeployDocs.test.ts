/**
 * How docs/cluster.md starts workers on real machines. Its systemd unit, read as systemd would: a
 * worker that cannot reach the server exits at once, so the unit must restart it slower than
 * systemd's default start limit (5 starts in 10 s) or it ends failed; it must pull in the network
 * it orders itself after; and its npx must not fetch a registry package named pxl. Its container
 * command runs pxl without npx, which ends on the SIGTERM of `docker stop` without passing it on.
 */
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';

const page = await readFile(new URL('../docs/cluster.md', import.meta.url), 'utf8');
const unit = /<<'EOF'\n([\s\S]*?)\nEOF/.exec(page)?.[1] ?? '';

/** The values of `key` in the unit, in order. */
const values = (key: string): string[] => unit.split('\n').filter((l) => l.startsWith(`${key}=`)).map((l) => l.slice(key.length + 1));

describe('the systemd unit of docs/cluster.md', () => {
  it('is on the page, a service that restarts the worker', () => {
    expect(values('ExecStart')[0]).toMatch(/ pxl worker --nats /);
    expect(values('Restart')).toEqual(['always']);
  });

  it('restarts a worker that exits at once without reaching the start limit of 5 starts in 10 s', () => {
    const restartSec = Number(values('RestartSec')[0] ?? '0.1');
    expect(restartSec * 5).toBeGreaterThanOrEqual(10);
  });

  it('wants the network-online target it starts after', () => {
    expect(values('After').join(' ')).toMatch(/network-online\.target/);
    expect(values('Wants').join(' ')).toMatch(/network-online\.target/);
  });

  it('runs the pxl installed on the machine, never one npx would fetch', () => {
    expect(values('ExecStart')[0]).toMatch(/^\/usr\/bin\/npx --no -- pxl /);
  });
});

describe('the container command of docs/cluster.md', () => {
  it('runs pxl worker itself, not through npx', () => {
    const commands = page.match(/docker run [^`]*/g) ?? [];
    expect(commands.length).toBeGreaterThan(0);
    for (const c of commands) expect(c).toMatch(/^docker run --init \S+ pxl worker /);
  });
});

// Where the machine's CPU went during a load, from /proc (Linux): the target process,
// the benchmark itself (the load generator), every PostgreSQL and Redis process, and
// everything else. On a 2-core machine this is often the whole explanation of a
// figure: the server can only use what the others leave.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

/** Cores used on average over the load (1 = one core fully busy). */
export interface CpuCores {
  target: number;
  loadGenerator: number;
  databases: number;
  other: number;
  machine: number;
}

interface Snapshot {
  wallMs: number;
  target: number;
  self: number;
  databases: number;
  machineBusy: number;
}

const DATABASE_COMMANDS = new Set(['postgres', 'redis-server']);

let ticksPerSecond: number | undefined;
function clockTicks(): number {
  if (ticksPerSecond === undefined) {
    try {
      ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      ticksPerSecond = 100;
    }
  }
  return ticksPerSecond;
}

/**
 * A process from /proc/<pid>/stat: utime + stime in seconds, the same of its children that
 * have ended (cutime + cstime), its command name and its parent; null when it is gone.
 */
export function processCpu(pid: number | string): { seconds: number; endedChildrenSeconds: number; command: string; ppid: number } | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command sits in parentheses and may itself contain spaces or parentheses.
    const open = stat.indexOf('(');
    const close = stat.lastIndexOf(')');
    const fields = stat.slice(close + 2).split(' ');
    // After the command: state is field 3 of the full line, so the parent (4) is at 1 here,
    // utime (14) and stime (15) at 11 and 12, cutime (16) and cstime (17) at 13 and 14.
    return {
      seconds: (Number(fields[11]) + Number(fields[12])) / clockTicks(),
      endedChildrenSeconds: (Number(fields[13]) + Number(fields[14])) / clockTicks(),
      command: stat.slice(open + 1, close),
      ppid: Number(fields[1]),
    };
  } catch {
    return null;
  }
}

function machineBusySeconds(): number {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n')[0]!;
    const [, ...values] = line.trim().split(/\s+/);
    const n = values.map(Number);
    const total = n.slice(0, 8).reduce((a, b) => a + b, 0); // user nice system idle iowait irq softirq steal
    const idle = (n[3] ?? 0) + (n[4] ?? 0);
    return (total - idle) / clockTicks();
  } catch {
    return Number.NaN;
  }
}

function databaseSeconds(): number {
  let sum = 0;
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return Number.NaN;
  }
  for (const pid of pids) {
    const cpu = processCpu(pid);
    if (cpu && DATABASE_COMMANDS.has(cpu.command)) sum += cpu.seconds;
  }
  return sum;
}

function snapshot(targetPid: number): Snapshot {
  const self = process.cpuUsage();
  return {
    wallMs: performance.now(),
    target: processCpu(targetPid)?.seconds ?? Number.NaN,
    self: (self.user + self.system) / 1e6,
    databases: databaseSeconds(),
    machineBusy: machineBusySeconds(),
  };
}

/** Starts counting; `stop()` gives the cores each party used since, and over how long. */
export function watchCpu(targetPid: number): { stop(): CpuCores & { seconds: number } } {
  const before = snapshot(targetPid);
  return {
    stop() {
      const after = snapshot(targetPid);
      const wall = (after.wallMs - before.wallMs) / 1000;
      const cores = (a: number, b: number) => (wall > 0 ? (a - b) / wall : Number.NaN);
      const target = cores(after.target, before.target);
      const loadGenerator = cores(after.self, before.self);
      const databases = cores(after.databases, before.databases);
      const machine = cores(after.machineBusy, before.machineBusy);
      return { target, loadGenerator, databases, other: Math.max(0, machine - target - loadGenerator - databases), machine, seconds: wall };
    },
  };
}

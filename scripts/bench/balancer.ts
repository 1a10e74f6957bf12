// A round-robin TCP balancer for the multi-process read figure: each new connection goes
// to the next API process in turn, and bytes are piped both ways untouched. It runs in a
// process of its own, as a real balancer would, so that it never shares the load
// generator's event loop. A few lines of node:net rather than a proxy library: nothing
// here parses HTTP, and a library would add its own cost to what is measured.
//
//   node scripts/bench/balancer.ts --port 4200 --targets 127.0.0.1:4101,127.0.0.1:4102
import { connect, createServer } from 'node:net';
import { parseArgs } from 'node:util';

const { values } = parseArgs({ options: { port: { type: 'string' }, targets: { type: 'string' } } });
if (!values.port || !values.targets) {
  console.error('usage: node scripts/bench/balancer.ts --port <port> --targets <host:port,...>');
  process.exit(2);
}
const targets = values.targets.split(',').map((t) => {
  const at = t.lastIndexOf(':');
  return { host: t.slice(0, at), port: Number(t.slice(at + 1)) };
});
let next = 0;
const server = createServer((client) => {
  const target = targets[next++ % targets.length]!;
  const upstream = connect(target.port, target.host);
  client.setNoDelay(true);
  upstream.setNoDelay(true);
  client.pipe(upstream).pipe(client);
  const close = () => {
    client.destroy();
    upstream.destroy();
  };
  client.on('error', close).on('close', close);
  upstream.on('error', close).on('close', close);
});
server.listen(Number(values.port), '127.0.0.1');
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => process.exit(0));

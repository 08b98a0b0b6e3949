// The baseline: a bare Fastify server answering GET /health with the same JSON as Gatehouse, through
// the same kind of compiled response schema, no plugins, no hooks, no logging.
import Fastify from 'fastify';

const app = Fastify({ logger: false });
const OK = { status: 'ok' };
app.get(
  '/health',
  {
    schema: {
      response: {
        200: { type: 'object', properties: { status: { const: 'ok' } }, required: ['status'] },
      },
    },
  },
  () => OK,
);

const port = Number(process.env.PORT ?? 0);
await app.listen({ port, host: '127.0.0.1' });
const address = app.server.address();
process.stdout.write(`${JSON.stringify({ port: typeof address === 'object' ? address?.port : port })}\n`);
process.on('SIGTERM', () => {
  app.close().then(() => process.exit(0));
});

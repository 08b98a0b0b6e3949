import SerializerSelector from '@fastify/fast-json-stringify-compiler';

type SerializerFactory = ReturnType<typeof SerializerSelector>;
type Serializer = ReturnType<ReturnType<SerializerFactory>>;

/**
 * Fastify's own response serializer factory (fast-json-stringify), compiling each schema object
 * once instead of once per route and status. Every route declares the same ProblemSchema for 4xx
 * and 5xx; compiled per route, that was ~80 identical serializers of ~37 KB of heap each (its
 * `code` enum makes fast-json-stringify carry an Ajv validator per copy) and their compile time at
 * start (docs/benchmarks.md, peak memory). A serializer depends only on its schema and the
 * factory's shared schemas and options, so one compiled function serves every route that names
 * the same schema object; a schema written out again is still compiled on its own.
 *
 * Each is compiled when first used, not at start. A same-run A/B against Fastify's own per-route
 * serializers (bench/ab-builds.sh, docs/benchmarks.md) measured start ~1.13 s → ~0.76 s and peak
 * RSS under verify-token load ~220 → ~198 MB; per-request CPU is the same.
 */
export function sharedSerializerFactory(): SerializerFactory {
  const build = SerializerSelector();
  return (externalSchemas, options) => {
    const compile = build(externalSchemas, options);
    const compiled = new WeakMap<object, Serializer>();
    return (route) => {
      const { schema } = route;
      if (typeof schema !== 'object' || schema === null) return compile(route);
      let serializer = compiled.get(schema);
      if (serializer === undefined) {
        serializer = lazySerializer(() => compile(route));
        compiled.set(schema, serializer);
      }
      return serializer;
    };
  };
}

function lazySerializer(compile: () => Serializer): Serializer {
  let compiled: Serializer | undefined;
  return (payload) => {
    compiled ??= compile();
    return compiled(payload);
  };
}

import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { Deployment } from 'kubernetes-models/apps/v1';
import { PersistentVolumeClaim, Secret, Service } from 'kubernetes-models/v1';
import { parseAllDocuments } from 'yaml';

// The Kubernetes example (deploy/kubernetes/, docs/containers.md "Kubernetes"): no cluster runs
// where the suite runs, so each manifest is checked against the Kubernetes API's schemas (the
// `kubernetes-models` validators, generated from the API's OpenAPI document) and against the
// image and the service: probes on the endpoints docs/operations.md names, the Secret every
// reference names, the Service reaching the pods, one replica on a SQLite volume.

const DIR = new URL('../../deploy/kubernetes/', import.meta.url);
const MODELS = {
  'apps/v1 Deployment': Deployment,
  'v1 Secret': Secret,
  'v1 Service': Service,
  'v1 PersistentVolumeClaim': PersistentVolumeClaim,
} as const;

interface Manifest {
  file: string;
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string> };
  // biome-ignore lint/suspicious/noExplicitAny: a manifest's body is whatever its kind says
  spec?: any;
  stringData?: Record<string, string>;
}

function listYaml(dir: URL, prefix = ''): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? listYaml(new URL(`${entry.name}/`, dir), `${prefix}${entry.name}/`)
      : entry.name.endsWith('.yaml')
        ? [`${prefix}${entry.name}`]
        : [],
  );
}

function load(file: string): Manifest[] {
  return parseAllDocuments(readFileSync(new URL(file, DIR), 'utf8')).map((doc) => {
    assert.deepEqual(doc.errors, [], `${file}: YAML`);
    return { file, ...(doc.toJS() as Omit<Manifest, 'file'>) };
  });
}

/** Throws, naming the field, when the object breaks its kind's schema. */
function validate(manifest: Manifest): void {
  const { file, ...object } = manifest;
  const Model = MODELS[`${object.apiVersion} ${object.kind}` as keyof typeof MODELS];
  assert.ok(Model, `${file}: ${object.apiVersion} ${object.kind} is a kind this test knows`);
  // biome-ignore lint/suspicious/noExplicitAny: each model takes its own kind's shape
  new Model(object as any).validate();
}

const FILES = listYaml(DIR);
const ALL = FILES.flatMap(load);
const deployments = ALL.filter((m) => m.kind === 'Deployment');

describe('deploy/kubernetes', () => {
  it('every manifest passes its kind’s Kubernetes schema', () => {
    assert.deepEqual(FILES.sort(), [
      'deployment.yaml',
      'secret.yaml',
      'service.yaml',
      'sqlite/gatehouse.yaml',
    ]);
    for (const manifest of ALL) {
      assert.doesNotThrow(() => validate(manifest), `${manifest.file}: ${manifest.kind}`);
    }
  });

  it('the schema check rejects a broken manifest (it is not a no-op)', () => {
    const broken = structuredClone(deployments[0] as Manifest);
    broken.spec.template.spec.containers[0].ports[0].containerPort = 'http';
    assert.throws(() => validate(broken), /containerPort must be integer/);
    const unnamed = structuredClone(deployments[0] as Manifest);
    delete unnamed.spec.template.spec.containers[0].name;
    assert.throws(() => validate(unnamed), /containers\/0 must have required property name/);
  });

  it('each Deployment: readiness on /health/detailed, liveness on /health, the image’s user, SECRETS_KEY from the Secret', () => {
    const secret = ALL.find((m) => m.kind === 'Secret');
    assert.ok(secret?.stringData?.SECRETS_KEY, 'the Secret holds SECRETS_KEY');
    assert.equal(deployments.length, 2);
    for (const deployment of deployments) {
      const pod = deployment.spec.template.spec;
      const [container] = pod.containers;
      assert.equal(pod.containers.length, 1);
      assert.deepEqual(container.ports, [{ name: 'http', containerPort: 3000 }], deployment.file);
      // docs/operations.md, "Readiness": /health/detailed takes a replica out of rotation,
      // /health restarts it.
      assert.deepEqual(container.readinessProbe.httpGet, { path: '/health/detailed', port: 'http' });
      assert.deepEqual(container.livenessProbe.httpGet, { path: '/health', port: 'http' });
      assert.deepEqual(container.startupProbe.httpGet, { path: '/health', port: 'http' });
      // The Dockerfile's USER node is uid 1000 in both bases (node:24-slim, the CI's own).
      assert.equal(pod.securityContext.runAsNonRoot, true);
      assert.equal(pod.securityContext.runAsUser, 1000);
      assert.equal(container.securityContext.readOnlyRootFilesystem, true);
      assert.deepEqual(container.args, ['serve']);
      // biome-ignore lint/suspicious/noExplicitAny: an env entry is a value or a valueFrom
      const env = new Map<string, any>(container.env.map((e: { name: string }) => [e.name, e]));
      assert.match(env.get('PUBLIC_URL').value, /^https:\/\//);
      // Every secretKeyRef names the Secret and a key it has.
      for (const e of container.env) {
        const ref = e.valueFrom?.secretKeyRef;
        if (!ref) continue;
        assert.equal(ref.name, secret.metadata.name, `${deployment.file}: ${e.name}`);
        assert.ok(ref.key in secret.stringData, `${deployment.file}: ${e.name} from a key the Secret has`);
      }
      assert.equal(env.get('SECRETS_KEY').valueFrom.secretKeyRef.key, 'SECRETS_KEY');
    }
  });

  it('the Service selects the pods and reaches their http port', () => {
    const service = ALL.find((m) => m.kind === 'Service') as Manifest;
    for (const deployment of deployments) {
      const labels = deployment.spec.template.metadata.labels;
      for (const [key, value] of Object.entries(service.spec.selector)) {
        assert.equal(labels[key], value, `${deployment.file}: pod label ${key}`);
      }
      assert.deepEqual(deployment.spec.selector.matchLabels, service.spec.selector);
    }
    assert.equal(service.spec.ports[0].targetPort, 'http');
  });

  it('PostgreSQL: DATABASE_URL from the Secret, several replicas; SQLite: one replica, Recreate, the volume at /app/data', () => {
    const postgres = deployments.find((d) => d.file === 'deployment.yaml') as Manifest;
    const pgEnv = postgres.spec.template.spec.containers[0].env;
    assert.deepEqual(pgEnv.find((e: { name: string }) => e.name === 'DATABASE_URL').valueFrom.secretKeyRef, {
      name: 'gatehouse',
      key: 'DATABASE_URL',
    });
    assert.ok(postgres.spec.replicas >= 2);

    // One serving process per SQLite file (docs/deployment.md): a rolling update would start the
    // new pod while the old one holds the file, and the second `serve` is refused.
    const sqlite = deployments.find((d) => d.file === 'sqlite/gatehouse.yaml') as Manifest;
    assert.equal(sqlite.spec.replicas, 1);
    assert.equal(sqlite.spec.strategy.type, 'Recreate');
    const pod = sqlite.spec.template.spec;
    const env = pod.containers[0].env;
    assert.equal(
      env.find((e: { name: string }) => e.name === 'DATABASE_URL').value,
      'sqlite:/app/data/gatehouse.db',
    );
    const mount = pod.containers[0].volumeMounts.find(
      (v: { mountPath: string }) => v.mountPath === '/app/data',
    );
    const volume = pod.volumes.find((v: { name: string }) => v.name === mount.name);
    const claim = ALL.find((m) => m.kind === 'PersistentVolumeClaim') as Manifest;
    assert.equal(volume.persistentVolumeClaim.claimName, claim.metadata.name);
    assert.equal(pod.securityContext.fsGroup, 1000, 'the volume is writable by the image’s user');
  });
});

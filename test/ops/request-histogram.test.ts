import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createRequestHistogram } from '../../src/modules/core/request-histogram.ts';

describe('request-duration histogram', () => {
  it('writes cumulative buckets (le: at or under the bound), +Inf, sum and count per series', () => {
    const h = createRequestHistogram('t_seconds', 'help text', [0.1, 0.01]);
    for (const s of [0.005, 0.01, 0.05, 2]) h.observe('GET', '/a', 200, s);
    h.observe('POST', '/b/"x"\\\n', 500, 0.2);
    assert.equal(
      h.render(),
      [
        '# HELP t_seconds help text',
        '# TYPE t_seconds histogram',
        't_seconds_bucket{le="0.01",method="GET",route="/a",status_code="200"} 2',
        't_seconds_bucket{le="0.1",method="GET",route="/a",status_code="200"} 3',
        't_seconds_bucket{le="+Inf",method="GET",route="/a",status_code="200"} 4',
        't_seconds_sum{method="GET",route="/a",status_code="200"} 2.065',
        't_seconds_count{method="GET",route="/a",status_code="200"} 4',
        't_seconds_bucket{le="0.01",method="POST",route="/b/\\"x\\"\\\\\\n",status_code="500"} 0',
        't_seconds_bucket{le="0.1",method="POST",route="/b/\\"x\\"\\\\\\n",status_code="500"} 0',
        't_seconds_bucket{le="+Inf",method="POST",route="/b/\\"x\\"\\\\\\n",status_code="500"} 1',
        't_seconds_sum{method="POST",route="/b/\\"x\\"\\\\\\n",status_code="500"} 0.2',
        't_seconds_count{method="POST",route="/b/\\"x\\"\\\\\\n",status_code="500"} 1',
        '',
      ].join('\n'),
    );
  });
});

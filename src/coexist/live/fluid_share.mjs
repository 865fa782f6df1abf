// The fluid model's answers for the "Your network" page, computed from the engine's runs as
// coexist.fluid computes them from the native kernel's: each flow's goodput after the
// warm-up (metrics.per_flow: its rate thinned by the loss its fluid meets one forward delay
// later), the BBR flows' total share, and the Nash equilibria of a set of mixes by the
// deviation test of coexist.fluid.studies.equilibria (per-flow goodput of each algorithm, standard
// errors from four batch means, a switch must gain more than two of them). Sums run in
// order, not numpy's pairwise order, so shares agree with Python's to the digits shown,
// not to the last bit.

/** Bits per packet of the book's dumbbell (metrics.BITS). */
export const BITS = 1500 * 8;
/** Batch means per run and the standard errors a switch must beat (equilibria.BATCHES,
 * nash.SPREAD_Z). */
export const BATCHES = 4;
export const SPREAD_Z = 2.0;

/** The dumbbell of one mix as setup.mjs takes it: n - k CUBIC flows, then k of `variant`,
 * RTTs spread evenly from rttLoS to rttHiS in that order; sampled as the equilibrium
 * searches sample (equilibria.mix_config). */
export function mixSetup({ n, k, variant, capacityBps, rttLoS, rttHiS, bufferBdp, durationS,
  warmupS, stepS, aqm, rtpropExpiry, phases }) {
  const ccas = [...Array(n - k).fill("cubic"), ...Array(k).fill(variant)];
  const rttsS = Array.from({ length: n }, (_, i) => (n === 1 || rttHiS === rttLoS
    ? rttLoS : i * ((rttHiS - rttLoS) / (n - 1)) + rttLoS));
  rttsS[n - 1] = rttHiS;
  const pps = capacityBps / BITS;
  const setup = { ccas, capacityBps, rttsS, bufferBdp, durationS, warmupS, stepS,
    sampleS: Math.max(stepS, Math.min(1e-3, n / pps)), aqm,
    rtpropExpiry: k > 0 && rtpropExpiry, fields: ["x"] };
  if (ccas.includes("bbr2")) setup.bbr2Phases = phases;
  return setup;
}

/** Each flow's goodput (bit/s) after `warmupS`, and its four batch means, from an engine
 * result (traces.x in packets per ms, link.pc the loss signal) of the kernel arguments
 * `args` (setup.mjs's dumbbell: step h and forward delays d0 in ms). */
export function goodput(result, args, warmupS) {
  const n = args.cca.length;
  const nOut = result.n_out;
  const x = result.traces.x;
  const pc = result.link.pc;
  const t = Array.from({ length: nOut }, (_, i) => (i * args.every * args.h) / 1e3);
  const dt = t[1] - t[0];
  const first = t.findIndex((v) => v >= warmupS);
  const late = nOut - first;
  // numpy.array_split: the first (late % BATCHES) batches one sample longer
  const size = Math.floor(late / BATCHES);
  const extra = late % BATCHES;
  const edges = [first];
  for (let b = 0; b < BATCHES; b++) edges.push(edges[b] + size + (b < extra ? 1 : 0));
  const mean = new Float64Array(n);
  const batches = Array.from({ length: BATCHES }, () => new Float64Array(n));
  for (let i = 0; i < n; i++) {
    const shift = Math.round(args.d0[i] / 1e3 / dt);
    let total = 0;
    for (let b = 0; b < BATCHES; b++) {
      let part = 0;
      for (let s = edges[b]; s < edges[b + 1]; s++) {
        part += x[s * n + i] * 1e3 * (1 - pc[Math.min(s + shift, nOut - 1)]);
      }
      batches[b][i] = (part / (edges[b + 1] - edges[b])) * BITS;
      total += part;
    }
    mean[i] = (total / late) * BITS;
  }
  return { mean, batches };
}

/** The BBR flows' total share of the goodput. */
export function bbrShare(good, ccas) {
  let bbr = 0;
  let all = 0;
  ccas.forEach((c, i) => {
    all += good.mean[i];
    if (c !== "cubic") bbr += good.mean[i];
  });
  return bbr / all;
}

/** Per-flow goodput of one algorithm in a run ("cubic" or BBR) and its standard error from
 * the batch means (equilibria.group_goodput), or null where the mix has no such flow. */
export function perFlow(good, ccas, cubic) {
  const idx = ccas.map((c, i) => ((c === "cubic") === cubic ? i : -1)).filter((i) => i >= 0);
  if (idx.length === 0) return null;
  const avg = (arr) => idx.reduce((s, i) => s + arr[i], 0) / idx.length;
  const byBatch = good.batches.map(avg);
  const m = byBatch.reduce((s, v) => s + v, 0) / BATCHES;
  const variance = byBatch.reduce((s, v) => s + (v - m) ** 2, 0) / (BATCHES - 1);
  return { bps: avg(good.mean), se: Math.sqrt(variance) / Math.sqrt(BATCHES) };
}

/** The mixes (BBR flow counts 0..n) where no single flow gains by switching, from
 * table[k] = {cubic, bbr} (perFlow's values; null for an absent algorithm). */
export function equilibria(table) {
  const n = table.length - 1;
  const found = [];
  for (let k = 0; k <= n; k++) {
    let ok = true;
    if (k < n) {  // a CUBIC flow turning BBR
      const now = table[k].cubic;
      const then = table[k + 1].bbr;
      ok &&= then.bps - now.bps <= SPREAD_Z * Math.hypot(now.se, then.se);
    }
    if (k > 0) {  // a BBR flow turning CUBIC
      const now = table[k].bbr;
      const then = table[k - 1].cubic;
      ok &&= then.bps - now.bps <= SPREAD_Z * Math.hypot(then.se, now.se);
    }
    if (ok) found.push(k);
  }
  return found;
}

// A reader's dumbbell as the engine's arguments: what coexist.fluid.model.solve.dumbbell,
// coexist.fluid.model.paper_setup.start and solve.published_arguments compute in Python, with the
// same doubles, so a page builds a run from its own inputs and gets the book's numbers.
//
// BBRv2's period phases are draws of Python's seeded Mersenne Twister
// (coexist.fluid.model.paper_setup.paper_phases): a page takes them as an input, from a table the
// book writes, and this module only places them.

/** The kernel's codes of the congestion controls (solve.CCAS). */
export const CCA_CODES = { reno: 0, cubic: 1, bbr1: 2, bbr2: 3 };
/** Bytes per packet of the book's dumbbell (solve.PACKET_BYTES). */
export const PACKET_BYTES = 1500;

/** Python's round(x, digits) for the digits used here: the nearest double to the
 * decimal rounding (toFixed rounds the exact binary value; no tie can occur). */
function roundTo(x, digits) {
  return Number(x.toFixed(digits));
}

/** Python's round(x): to the nearest integer, halves to even. */
function roundHalfEven(x) {
  const r = Math.floor(x + 0.5);
  return r - x === 0.5 && r % 2 !== 0 ? r - 1 : r;
}

/** numpy.linspace(lo, hi, n): i * step + lo, the last exactly hi. */
export function linspace(lo, hi, n) {
  if (n === 1) return [lo];
  const step = (hi - lo) / (n - 1);
  const out = Array.from({ length: n }, (_, i) => i * step + lo);
  out[n - 1] = hi;
  return out;
}

/** BBRv2's initial inflight_hi in initial windows, from the buffer in the paper's unit
 * (paper_setup.link_units and paper_setup.inflight_hi_factor). */
function inflightHiFactor(bufferPkts, capacityPps, linkLatencyS) {
  const unit = Math.ceil(capacityPps * linkLatencyS - 1e-9);
  if (!(unit >= 1 && bufferPkts > 0)) throw new Error("link latency: C x latency < 1 packet");
  const b = bufferPkts / unit;
  return (1 + 2 * Math.max(b - 4, 0) / 4) * 5 / 4;
}

/** Each flow's twin, the first earlier flow it repeats bit for bit, or itself
 * (published.copies). */
export function copies(cca, d0, dd, w0, x0, whi0, tstr0, prt) {
  const n = cca.length;
  const twin = Array.from({ length: n }, (_, i) => i);
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < i; j++) {
      if (twin[j] !== j || cca[i] !== cca[j]) continue;
      let same = d0[i] === d0[j] && dd[i] === dd[j] && w0[i] === w0[j];
      if (cca[i] === CCA_CODES.bbr1) {
        same = same && i % 6 === j % 6 && x0[i] === x0[j] && whi0[i] === whi0[j]
          && tstr0[i] === tstr0[j] && prt[i] === prt[j];
      } else if (cca[i] === CCA_CODES.bbr2) {
        same = false;
      }
      if (same) {
        twin[i] = j;
        break;
      }
    }
  }
  return twin;
}

/** The engine's arguments for a dumbbell: `ccas` (one name per flow), `capacityBps`,
 * `rttsS` (one base RTT per flow, half before the queue), `bufferBdp` (BDPs of the shortest
 * RTT), `durationS`, `warmupS`, `stepS`, `sampleS`, `aqm` ("droptail" or "red"),
 * `rtpropExpiry`, `cubicRecovery`, and `bbr2Phases` (one per flow, needed with BBRv2). */
export function dumbbell({ ccas, capacityBps, rttsS, bufferBdp, durationS, warmupS = 0,
  stepS = 1e-5, sampleS = 1e-3, aqm = "droptail", rtpropExpiry = false,
  cubicRecovery = false, bbr2Phases = null, fields = ["x", "w", "tau"] }) {
  const n = ccas.length;
  if (rttsS.length !== n) throw new Error(`rttsS: ${rttsS.length} RTTs for ${n} flows`);
  const cca = ccas.map((c) => {
    if (!(c in CCA_CODES)) throw new Error(`cca ${c}: one of ${Object.keys(CCA_CODES)}`);
    return CCA_CODES[c];
  });
  const capacityPps = capacityBps / (8 * PACKET_BYTES);
  const rttMin = Math.min(...rttsS);
  const bufferPkts = bufferBdp * capacityPps * rttMin;
  const factor = inflightHiFactor(bufferPkts, capacityPps, rttMin / 2);
  const anyBbr2 = cca.includes(CCA_CODES.bbr2);
  if (anyBbr2 && !(bbr2Phases && bbr2Phases.length === n)) {
    throw new Error("bbr2Phases: one phase per flow with BBRv2 (paper_setup.paper_phases)");
  }
  const h = roundTo(stepS * 1e3, 12);
  const half = rttsS.map((r) => r / 2);
  const d0 = half.map((d) => roundTo(d * 1e3, 9));
  const dd = half.map((d) => roundTo((d + d) * 1e3, 9));
  if (!d0.every((d) => d >= h)) throw new Error("step: longer than a source latency");
  const capacity = capacityPps / 1e3;
  const nSteps = Math.trunc(durationS * 1000 / h);
  const start = Math.trunc(warmupS * 1000 / h);
  if (!(start >= 0 && start < nSteps)) throw new Error("warmupS: 0 <= warm-up < duration");
  const every = Math.max(1, Math.trunc(roundHalfEven(sampleS * 1e3 / h)));
  const w0 = dd.map((d) => d * capacity / n);
  const tstr0 = dd.map((d, i) => (anyBbr2 ? -10.0 * d - bbr2Phases[i] * 1000.0 : 0.0));
  const prt = dd.map(() => 10.0 * 1000.0);
  const x0Est = w0.map((w) => w / dd[0]);
  const whi0 = w0.map((w) => factor * w);
  return {
    cca, d0, dd, capacity, buffer: bufferPkts, red: aqm === "red", h, n_steps: nSteps,
    start, every, w0, x0_est: x0Est, w_hi0: whi0, tstr0, prt,
    copy_of: copies(cca, d0, dd, w0, x0Est, whi0, tstr0, prt),
    expiry: rtpropExpiry, recovery: cubicRecovery, fields,
  };
}

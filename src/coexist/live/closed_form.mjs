// The closed form in the reader's browser: Ware et al.'s baseline (Mishra et al. eqs. 2-4),
// Mishra et al.'s two-flow model (eqs. 18-20), its multi-flow bounds (eqs. 21-24) and the
// Nash equilibrium of eq. 25 with the unilateral-deviation test of §4.4: the equations of
// coexist.closed_form (ware.py, mishra.py, nash.py), operation for operation and in their
// order, so that every result carries Python's bits. The formulas use only +, -, *, / and
// comparisons, which IEEE 754 rounds the same everywhere; no Math function enters them
// (numpy's round to 9 decimals is rebuilt below from its own multiply, rint and divide).
// Inputs are assumed valid: the page and the command line check them first.

export const BETA_CUBIC = 0.7;
export const PROBE_RTT_S = 0.2;
export const PROBE_INTERVAL_S = 10.0;
export const PROBE_RTT_PACKETS = 4;
export const DEEP_BUFFER_BDP = 100.0;
const BISECTION_STEPS = 64;

/** Ware et al.'s aggregate BBR share (eqs. 2-4), NaN where it leaves [0, 1]. */
export function wareShare({ bufferBdp, capacityBps, rttS, nBbr = 1, durationS = 120.0,
  packetBytes = 1500 }) {
  const capacityPps = capacityBps / (8.0 * packetBytes);
  const queuePackets = bufferBdp * capacityPps * rttS;
  const p = 0.5 - 1.0 / (2.0 * bufferBdp) - PROBE_RTT_PACKETS * nBbr / queuePackets;
  const perProbe = queuePackets / capacityPps + PROBE_RTT_S + rttS;
  const probe = perProbe * (durationS / PROBE_INTERVAL_S);
  const frac = (1.0 - p) * (durationS - probe) / durationS;
  return frac < 0 || frac > 1 ? NaN : frac;
}

/** Eq. (18) as LHS - RHS in BDP units (mishra.residual). */
export function residual(y, x, beta = BETA_CUBIC) {
  const a = (x - 1.0) / 2.0;
  return a + a / (a + y) - beta * ((x - y) + (x - y) / x);
}

/** Bisection on [lo, hi] holding one root; rootIsRight(mid) is true where it lies above. */
export function bisect(rootIsRight, lo, hi, steps = BISECTION_STEPS) {
  for (let i = 0; i < steps; i++) {
    const mid = 0.5 * (lo + hi);
    if (rootIsRight(mid)) lo = mid;
    else hi = mid;
  }
  return 0.5 * (lo + hi);
}

/** BBR's average buffer occupancy in BDP: the unique root of eq. (18) in (0, X). */
export function bbrOccupancyBdp(x, beta = BETA_CUBIC) {
  return bisect((mid) => residual(mid, x, beta) < 0.0, 0.0, x);
}

/** CUBIC's minimum buffer occupancy in BDP (eq. 10 with b_b + b_c = B). */
export function cubicMinOccupancyBdp(x) {
  return (x - 1.0) / 2.0;
}

/** BBR's share from eqs. (18)-(20) in BDP units (mishra.share_unchecked). */
export function shareUnchecked(x, beta = BETA_CUBIC) {
  const y = bbrOccupancyBdp(x, beta);
  const a = cubicMinOccupancyBdp(x);
  return 1.0 - (2.0 * a + 1.0 - y) / (1.0 + 2.0 * a);
}

/** One CUBIC and one BBR flow (eqs. 18-20, eq. 19 as printed), bandwidths in bit/s. */
export function twoFlow(x, capacityBps = 1.0, rttS = 1.0, beta = BETA_CUBIC) {
  const y = bbrOccupancyBdp(x, beta);
  const bdpBits = capacityBps * rttS;
  const bB = y * bdpBits;
  const bCmin = cubicMinOccupancyBdp(x) * bdpBits;
  const cubicBps = (2.0 * bCmin + capacityBps * rttS - bB) / (rttS + 2.0 * bCmin / capacityBps);
  const bbrBps = capacityBps - cubicBps;
  return { bufferBdp: x, bbrOccupancyBdp: y, cubicMinOccupancyBdp: cubicMinOccupancyBdp(x),
    cubicBps, bbrBps, bbrShare: bbrBps / (bbrBps + cubicBps) };
}

/** Aggregate CUBIC back-off when one of nCubic flows backs off (eq. 22). */
export function desyncBackoff(nCubic, beta = BETA_CUBIC) {
  return (nCubic - (1.0 - beta)) / nCubic;
}

/** Aggregate BBR share of nCubic CUBIC and nBbr BBR flows (eqs. 21-22). */
export function aggregateBbrShare(x, nCubic, nBbr, synchronised, beta = BETA_CUBIC) {
  const b = synchronised ? beta : desyncBackoff(Math.max(nCubic, 1), beta);
  const share = shareUnchecked(x, b);
  return nCubic === 0 ? 1.0 : nBbr === 0 ? 0.0 : share;
}

/** Aggregate and per-flow bandwidths (eqs. 21-24); per-flow NaN for an absent algorithm. */
export function multiFlow(x, nCubic, nBbr, { capacityBps = 1.0, synchronised,
  beta = BETA_CUBIC }) {
  const bbrShare = aggregateBbrShare(x, nCubic, nBbr, synchronised, beta);
  const bbrTotalBps = bbrShare * capacityBps;
  const cubicTotalBps = (1.0 - bbrShare) * capacityBps;
  return { bbrShare, cubicTotalBps, bbrTotalBps,
    cubicPerFlowBps: nCubic > 0 ? cubicTotalBps / nCubic : NaN,
    bbrPerFlowBps: nBbr > 0 ? bbrTotalBps / nBbr : NaN };
}

/** Per-flow CUBIC and BBR throughput for every mix k = 0..n (nash.model_table). */
export function modelTable(x, nFlows, synchronised, capacityBps = 1.0) {
  const cubic = [];
  const bbr = [];
  for (let k = 0; k <= nFlows; k++) {
    const m = multiFlow(x, nFlows - k, k, { capacityBps, synchronised });
    cubic.push(m.cubicPerFlowBps);
    bbr.push(m.bbrPerFlowBps);
  }
  return { cubic, bbr };
}

/** Mixes (BBR flow counts) where no single flow gains by switching (§4.4; nash.equilibria
 * without standard errors): a switch must gain more than tol times the current rate. */
export function equilibria(cubic, bbr, tol = 0.0) {
  const n = cubic.length - 1;
  const found = [];
  for (let k = 0; k <= n; k++) {
    let ok = true;
    if (k < n) ok &&= bbr[k + 1] - cubic[k] <= Math.max(cubic[k] * tol, 0.0);
    if (k > 0) ok &&= cubic[k - 1] - bbr[k] <= Math.max(bbr[k] * tol, 0.0);
    if (ok) found.push(k);
  }
  return found;
}

/** Eq. (25): the real number of BBR flows at which BBR's per-flow rate is C/N. */
export function crossing(x, nFlows, synchronised) {
  if (synchronised) return nFlows * shareUnchecked(x);
  const gap = (nb) => shareUnchecked(x, desyncBackoff(nFlows - nb)) - nb / nFlows;
  const above = gap(nFlows - 1.0) >= 0;
  const root = bisect((mid) => gap(mid) > 0, 0.0, nFlows - 1.0, 60);
  return above ? nFlows : root;
}

/** Both bounds of the predicted equilibrium (nash.predicted_region). */
export function predictedRegion(x, nFlows) {
  return { bbrFlowsSync: crossing(x, nFlows, true), bbrFlowsDesync: crossing(x, nFlows, false) };
}

/** numpy's rint: to the nearest integer, ties to even. */
function rint(v) {
  const f = Math.floor(v);
  const d = v - f;
  if (d < 0.5) return f;
  if (d > 0.5) return f + 1;
  return f % 2 === 0 ? f : f + 1;
}

/** numpy's round(v, 9): multiply by 1e9, rint, divide by 1e9. */
function round9(v) {
  return rint(v * 1e9) / 1e9;
}

/** The region widened outwards to whole flows (nash.whole_flows): [lowest, highest]. */
export function wholeFlows(region) {
  const lo = Math.min(region.bbrFlowsSync, region.bbrFlowsDesync);
  const hi = Math.max(region.bbrFlowsSync, region.bbrFlowsDesync);
  return [Math.floor(round9(lo)), Math.ceil(round9(hi))];
}

/** `coexist model share`'s numbers: the BBR share and per-flow rates of nCubic CUBIC and
 * nBbr BBR flows, both bounds and Ware et al.'s baseline (null where it has no answer). */
export function shareReport({ bufferBdp, nCubic, nBbr, capacityBps, rttS, durationS = 120.0 }) {
  const sync = multiFlow(bufferBdp, nCubic, nBbr, { capacityBps, synchronised: true });
  const desync = multiFlow(bufferBdp, nCubic, nBbr, { capacityBps, synchronised: false });
  let ware = 0.0;
  if (nBbr > 0) ware = wareShare({ bufferBdp, capacityBps, rttS, nBbr, durationS });
  const finite = (v) => (Number.isNaN(v) ? null : v);
  return {
    bbr_share_sync: sync.bbrShare, bbr_share_desync: desync.bbrShare,
    ware_bbr_share: finite(ware),
    bbr_per_flow_bps_sync: finite(sync.bbrPerFlowBps),
    bbr_per_flow_bps_desync: finite(desync.bbrPerFlowBps),
    cubic_per_flow_bps_sync: finite(sync.cubicPerFlowBps),
    cubic_per_flow_bps_desync: finite(desync.cubicPerFlowBps),
  };
}

/** `coexist model nash`'s numbers: eq. (25)'s crossings, the whole-flow region and the
 * integer equilibria of the model's table under either bound. */
export function nashReport({ bufferBdp, nFlows }) {
  const region = predictedRegion(bufferBdp, nFlows);
  const out = { bbr_flows_sync: region.bbrFlowsSync, bbr_flows_desync: region.bbrFlowsDesync,
    whole_flows: wholeFlows(region) };
  for (const [bound, sync] of [["sync", true], ["desync", false]]) {
    const t = modelTable(bufferBdp, nFlows, sync);
    out[`equilibria_${bound}`] = equilibria(t.cubic, t.bbr);
  }
  return out;
}

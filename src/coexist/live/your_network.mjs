// The "Your network" page: the reader's own bottleneck in the closed form (at once, on every
// change) and in the fluid model (in the engine's Web Worker, on request, with progress and a
// cancel button). The controls live in the URL's hash, so a view can be shared. Every value
// is checked against the book's range before anything runs; a value outside it gets one line
// naming the parameter, the value and the range. The page loads nothing from another site:
// this module, the engine and BBRv2's phase table come from the book's own _static/live/.
import * as cf from "./closed_form.mjs";
import { LiveEngine } from "./client.mjs";
import { bbrShare, equilibria, goodput, mixSetup, perFlow } from "./fluid_share.mjs";
import { dumbbell } from "./setup.mjs";

/** The controls: key in the URL, label, default, range [low, high], whole numbers or not.
 * The ranges are the book's (WhatIf's ledger entry; the closed form from 1 BDP, the fluid
 * model's runs as `coexist fluid run --engine browser` takes them). */
export const CONTROLS = [
  { key: "cap", label: "Capacity (Mbit/s)", value: 100, low: 1, high: 1000 },
  { key: "rtt", label: "RTT (ms)", value: 40, low: 0.5, high: 500 },
  { key: "rtt2", label: "RTT spread up to (ms)", value: 40, low: 0.5, high: 500 },
  { key: "buf", label: "Buffer (BDP)", value: 2, low: 0.05, high: 100 },
  { key: "n", label: "Flows", value: 2, low: 2, high: 50, whole: true },
  { key: "k", label: "of which BBR", value: 1, low: 0, high: 50, whole: true },
  { key: "v", label: "BBR version", value: 1, choices: [1, 2] },
  { key: "aqm", label: "Queue", value: "droptail", choices: ["droptail", "red"] },
  { key: "exp", label: "RTprop expiry", value: 0, choices: [0, 1] },
  { key: "dur", label: "Run length (s)", value: 120, low: 0.5, high: 600 },
  { key: "warm", label: "Warm-up (s)", value: 30, low: 0, high: 599 },
  { key: "step", label: "Step (µs)", value: 50, low: 10, high: 1000 },
];
/** Why the fluid model does not run on a page opened from a file. */
const FROM_FILE = "The fluid model runs when the book is served (any static server, e.g. "
  + "python -m http.server in its folder): opened from a file, the browser refuses its worker.";
/** The fluid model runs up to this many flows in the page. */
export const FLUID_MAX_FLOWS = 10;

/** The settings in a URL hash ("#cap=100&rtt=40..."), defaults for what it lacks. */
export function readHash(hash) {
  const given = new URLSearchParams(hash.replace(/^#/, ""));
  const out = {};
  for (const c of CONTROLS) {
    const text = given.get(c.key);
    out[c.key] = text === null ? c.value : (typeof c.value === "string" ? text : Number(text));
  }
  if (given.get("rtt2") === null) out.rtt2 = out.rtt;  // no spread unless one is given
  return out;
}

/** The settings as a URL hash. */
export function writeHash(s) {
  return "#" + CONTROLS.map((c) => `${c.key}=${encodeURIComponent(s[c.key])}`).join("&");
}

/** One line per value outside its range (empty when all are valid); `fluid` adds the
 * fluid model's own limits. */
export function problems(s, fluid = false) {
  const out = [];
  for (const c of CONTROLS) {
    const v = s[c.key];
    if (c.choices) {
      if (!c.choices.includes(v)) out.push(`${c.label}: ${v} is not one of ${c.choices.join(", ")}`);
    } else if (!(Number.isFinite(v) && v >= c.low && v <= c.high) || (c.whole && !Number.isInteger(v))) {
      out.push(`${c.label} = ${v} is outside the valid range ${c.low} to ${c.high}${c.whole ? " (whole numbers)" : ""}`);
    }
  }
  if (out.length) return out;
  if (s.k > s.n) out.push(`BBR flows = ${s.k} is outside the valid range 0 to ${s.n} (the flows)`);
  if (s.rtt2 < s.rtt) out.push(`RTT spread up to = ${s.rtt2} ms is outside the valid range ${s.rtt} to 500 ms (at least the RTT)`);
  if (fluid) {
    if (s.n > FLUID_MAX_FLOWS) out.push(`Flows = ${s.n} is outside the fluid model's range 2 to ${FLUID_MAX_FLOWS} in the page`);
    if (s.warm >= s.dur) out.push(`Warm-up = ${s.warm} s is outside the valid range 0 to ${s.dur} s (less than the run)`);
    const bdpPackets = (s.cap * 1e6 * s.rtt * 1e-3) / (8 * 1500);
    if (bdpPackets < s.n) out.push(`Capacity x RTT = ${bdpPackets.toFixed(2)} packets is outside the valid range: at least one 1500-B packet per flow (${s.n})`);
    if (s.step * 1e-3 > s.rtt / 2) out.push(`Step = ${s.step} µs is outside the valid range: at most half the RTT (${s.rtt / 2} ms)`);
  }
  return out;
}

/** The closed form for the settings: the BBR share of the mix (both bounds and Ware's
 * baseline) and the Nash region for the flows; null where the buffer is at most 1 BDP. */
export function closedForm(s) {
  if (!(s.buf > 1)) return null;
  const share = cf.shareReport({ bufferBdp: s.buf, nCubic: s.n - s.k, nBbr: s.k,
    capacityBps: s.cap * 1e6, rttS: s.rtt * 1e-3, durationS: s.dur });
  return { share, nash: cf.nashReport({ bufferBdp: s.buf, nFlows: s.n }) };
}

const fmt = (v, d = 3) => (v === null || Number.isNaN(v) ? "no answer" : v.toFixed(d));
const span = ([lo, hi]) => (lo === hi ? `${lo}` : `${lo} to ${hi}`);

/** The page: controls, readouts and caption inside `root`; `base` is this folder's URL. */
export class YourNetwork {
  constructor(root, base = new URL("./", import.meta.url)) {
    this.root = root;
    this.base = base;
    this.engine = null;
    this.phases = null;
    this.build();
    this.settings = readHash(location.hash);
    this.show();
    window.addEventListener("hashchange", () => { this.settings = readHash(location.hash); this.show(); });
  }

  build() {
    const el = (tag, attrs = {}, text = "") => {
      const e = document.createElement(tag);
      Object.assign(e, attrs);
      if (text) e.textContent = text;
      return e;
    };
    const form = el("form", { className: "yn-controls" });
    this.inputs = {};
    for (const c of CONTROLS) {
      const label = el("label", {}, c.label + " ");
      const input = c.choices ? el("select", { name: c.key }) : el("input", { name: c.key, type: "number", step: "any" });
      if (c.choices) {
        for (const o of c.choices) input.append(el("option", { value: String(o) }, c.key === "v" ? `BBRv${o}` : c.key === "exp" ? (o ? "on" : "off") : o === "red" ? "RED" : o === "droptail" ? "drop-tail" : String(o)));
      }
      input.addEventListener("change", () => this.read());
      label.append(input);
      form.append(label);
      this.inputs[c.key] = input;
    }
    form.addEventListener("submit", (e) => e.preventDefault());
    this.message = el("p", { className: "yn-message", role: "alert" });
    this.closed = el("div", { className: "yn-closed" });
    const buttons = el("p");
    this.runShare = el("button", { type: "button" }, "Run the fluid model for this mix");
    this.runNash = el("button", { type: "button" }, "Find its Nash equilibrium (every mix)");
    this.cancel = el("button", { type: "button", disabled: true }, "Cancel");
    this.runShare.addEventListener("click", () => this.fluid(false));
    this.runNash.addEventListener("click", () => this.fluid(true));
    this.cancel.addEventListener("click", () => this.stop("cancelled"));
    buttons.append(this.runShare, " ", this.runNash, " ", this.cancel);
    this.progress = el("p", { className: "yn-progress", role: "status" });
    this.fluidOut = el("div", { className: "yn-fluid" });
    this.caption = el("p", { className: "yn-caption" });
    this.root.replaceChildren(form, this.message, this.closed, buttons, this.progress, this.fluidOut, this.caption);
  }

  /** The controls' values into the settings and the URL. */
  read() {
    const s = {};
    for (const c of CONTROLS) {
      const text = this.inputs[c.key].value;
      s[c.key] = typeof c.value === "string" ? text : Number(text === "" ? NaN : text);
    }
    // without a spread, the spread's end follows the RTT
    if (this.settings.rtt2 === this.settings.rtt && s.rtt2 === this.settings.rtt2) s.rtt2 = s.rtt;
    this.settings = s;
    history.replaceState(null, "", writeHash(s));
    this.show();
  }

  show() {
    const s = this.settings;
    for (const c of CONTROLS) this.inputs[c.key].value = String(s[c.key]);
    const bad = problems(s);
    this.message.textContent = bad.join("\n");
    this.root.dataset.valid = bad.length ? "no" : "yes";
    const fluidBad = bad.length ? bad : problems(s, true);
    if (location.protocol === "file:") fluidBad.push(FROM_FILE);
    this.runShare.disabled = this.runNash.disabled = fluidBad.length > 0 || this.engine !== null;
    this.runShare.title = this.runNash.title = fluidBad[0] ?? "";
    if (!bad.length && location.protocol === "file:") this.progress.textContent = FROM_FILE;
    if (this.fluidOut.dataset.for !== writeHash(s)) this.fluidOut.textContent = "";
    if (bad.length) {
      this.closed.textContent = "";
      this.caption.textContent = "";
      return;
    }
    const r = closedForm(s);
    const mix = `${s.n - s.k} CUBIC and ${s.k} BBRv${s.v} flows`;
    const net = `${s.cap} Mbit/s, RTT ${s.rtt === s.rtt2 ? s.rtt : `${s.rtt} to ${s.rtt2}`} ms, buffer ${s.buf} BDP, ${s.aqm === "red" ? "RED" : "drop-tail"}${s.exp ? ", BBR's RTprop expiring as in Linux" : ""}`;
    if (r === null) {
      this.closed.textContent = "Closed form: it holds above 1 BDP only (Mishra et al.'s assumption 2); the fluid model runs here.";
    } else {
      const { share, nash } = r;
      this.closed.innerHTML = "";
      const rows = [
        ["BBR share, CUBIC synchronised (eq. 21)", fmt(share.bbr_share_sync), "share-sync"],
        ["BBR share, CUBIC de-synchronised (eq. 22)", fmt(share.bbr_share_desync), "share-desync"],
        ["BBR share, Ware et al. (eq. 2)", fmt(share.ware_bbr_share), "share-ware"],
        ["Nash equilibrium, eq. 25 crossings (BBR flows)", `${nash.bbr_flows_sync.toFixed(2)} and ${nash.bbr_flows_desync.toFixed(2)}`, "nash-crossings"],
        ["Nash region in whole flows", span(nash.whole_flows), "nash-region"],
      ];
      const table = document.createElement("table");
      table.className = "table yn-readout";
      for (const [name, value, id] of rows) {
        const tr = table.insertRow();
        tr.insertCell().textContent = name;
        const td = tr.insertCell();
        td.textContent = value;
        td.dataset.value = id;
      }
      this.closed.append(table);
    }
    this.caption.textContent = `Your network: ${mix} over ${net}. The closed form (Mishra et al.) `
      + "assumes one RTT, BBRv1 and drop-tail; it gives the BBR flows' total share between its "
      + "bounds for CUBIC flows backing off together or one at a time, and the number of BBR flows "
      + "at which no flow gains by switching. The fluid model (Scherrer et al.) runs "
      + `${s.dur} s at a ${s.step}-µs step, its averages after ${s.warm} s, in your browser`
      + (s.rtt === s.rtt2 ? "." : `, the RTTs spread evenly over the flows, the CUBIC flows' first (the closed form takes ${s.rtt} ms).`);
  }

  /** BBRv2's period phases for n flows (Python's seeded draws, written by the book). */
  async phaseTable(n) {
    if (this.phases === null) this.phases = await (await fetch(new URL("bbr2_phases.json", this.base))).json();
    return this.phases[String(n)];
  }

  stop(why) {
    clearInterval(this.timer);
    if (this.engine) this.engine.terminate();
    this.engine = null;
    this.cancel.disabled = true;
    this.progress.textContent = why;
    this.show();
  }

  /** One run of the chosen mix, or every mix 0..n and the deviation test. */
  async fluid(nash) {
    const s = this.settings;
    if (problems(s, true).length) return;
    const key = writeHash(s);
    try {
      this.engine = new LiveEngine(new URL("worker.mjs", this.base));
    } catch (err) {
      this.stop(`the fluid model cannot start here: ${err.message}`);
      return;
    }
    this.cancel.disabled = false;
    this.show();
    const started = performance.now();
    const mixes = nash ? Array.from({ length: s.n + 1 }, (_, k) => k) : [s.k];
    const table = [];
    try {
      const phases = s.v === 2 ? await this.phaseTable(s.n) : null;
      for (const [j, k] of mixes.entries()) {
        const what = `running mix ${j + 1} of ${mixes.length} (${s.n - k} CUBIC, ${k} BBR)`;
        const tick = () => { this.progress.textContent = `${what}, ${((performance.now() - started) / 1e3).toFixed(0)} s so far`; };
        tick();
        clearInterval(this.timer);
        this.timer = setInterval(tick, 1000);
        const setup = mixSetup({ n: s.n, k, variant: `bbr${s.v}`, capacityBps: s.cap * 1e6, rttLoS: s.rtt * 1e-3,
          rttHiS: s.rtt2 * 1e-3, bufferBdp: s.buf, durationS: s.dur, warmupS: s.warm, stepS: s.step * 1e-6,
          aqm: s.aqm, rtpropExpiry: s.exp === 1, phases });
        const args = dumbbell(setup);
        const engine = this.engine;
        if (engine === null) return;
        const result = await engine.run(args);
        const good = goodput(result, args, s.warm);
        table[k] = { share: bbrShare(good, setup.ccas), cubic: perFlow(good, setup.ccas, true),
          bbr: perFlow(good, setup.ccas, false) };
      }
    } catch (err) {
      if (this.engine !== null) this.stop(`the fluid model failed: ${err.message}`);
      return;
    }
    const seconds = ((performance.now() - started) / 1e3).toFixed(1);
    this.fluidOut.dataset.for = key;
    const mine = table[s.k];
    let text = mine ? `Fluid model: the BBR flows' total share ${fmt(mine.share)}` : "";
    if (nash) {
      const eq = equilibria(table);
      text = `Fluid model: BBR's total share in this mix ${fmt(table[s.k].share)}; Nash equilibria (BBR flows of ${s.n}): `
        + (eq.length ? eq.join(", ") : "none") + (eq.length && eq[eq.length - 1] - eq[0] > 1 ? " (undetermined at this precision)" : "");
      this.fluidOut.dataset.equilibria = eq.join(",");
    }
    this.fluidOut.textContent = text + ".";
    this.fluidOut.dataset.share = mine ? mine.share.toFixed(3) : "";
    this.engine.terminate();
    this.engine = null;
    this.stop(`done in ${seconds} s`);
  }
}

const root = typeof document !== "undefined" && document.getElementById("coexist-your-network");
if (root) new YourNetwork(root);

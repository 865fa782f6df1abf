// The page's side of the engine: a Web Worker running worker.mjs, and a promise per run.
//   const live = new LiveEngine();            // worker.mjs beside this file
//   const result = await live.run(args);      // args as engine.mjs's Engine.run takes them
//   const same = await live.runDumbbell({ ccas, capacityBps, rttsS, ... });  // setup.mjs
// Runs queue in the worker one after another; `terminate` stops the worker (and the run
// under way), for a page that abandons a run when the reader changes the settings.

export class LiveEngine {
  constructor(workerUrl = new URL("./worker.mjs", import.meta.url)) {
    this.worker = new Worker(workerUrl, { type: "module" });
    this.pending = new Map();
    this.next = 0;
    this.worker.onmessage = (event) => {
      const { id, ok, result, error } = event.data;
      const waiting = this.pending.get(id);
      this.pending.delete(id);
      if (waiting) (ok ? waiting.resolve(result) : waiting.reject(new Error(error)));
    };
    this.worker.onerror = (event) => {
      for (const waiting of this.pending.values()) waiting.reject(new Error(event.message));
      this.pending.clear();
    };
  }

  /** The engine's result for `args` (the kernel's arguments), computed in the worker. */
  run(args) {
    return this.#post({ args });
  }

  /** The engine's result for a dumbbell as setup.mjs's `dumbbell` takes it. */
  runDumbbell(setup) {
    return this.#post({ setup });
  }

  #post(request) {
    const id = this.next++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage({ id, ...request });
    });
  }

  terminate() {
    this.worker.terminate();
    for (const waiting of this.pending.values()) waiting.reject(new Error("engine stopped"));
    this.pending.clear();
  }
}

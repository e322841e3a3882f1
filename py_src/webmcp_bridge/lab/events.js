// events.js: the JS half of webmcp_bridge/lab/events.py: the page's kernel-run events, handed to the loader's
// emit(type, detailJson), which dispatches them on window. Python decides what an event holds.
(() => {
  let emit = null; // the loader's ctx.emit (attach)
  return {
    // An older loader has no emit: then nothing is sent.
    attach(ctx) {
      emit = typeof ctx?.emit === "function" ? ctx.emit : null;
    },
    // emit(type, detailJson): one event; false when the loader has no emit. A page listener that throws is the
    // page's: it is reported to the console and never reaches Python (nothing comes back from an event).
    emit(type, detailJson) {
      if (!emit) return false;
      try { emit(String(type), String(detailJson)); } catch (error) { console.error("[webmcp-bridge] event", error); }
      return true;
    },
  };
})()

// Makes the page cross-origin isolated where the host does not send the headers, before the app
// starts: registers isolation-sw.js (which adds them) and reloads the page once, so that this
// load's answer carries them. The app waits for `window.clozelabIsolation` to settle before it
// starts (src/app/web/isolation.rs), so nothing of a participant's (answers, a JATOS batch slot,
// an outbox) is touched by the load that is thrown away. Where it cannot be done, the app starts
// at once and the model's backend line says it runs on one thread; the reason is logged.
(() => {
  const RELOADED = "clozelab-isolation-reloaded";
  const WAIT_MS = 4000;
  const goOn = (why) => {
    if (why) console.info(`clozelab: one thread for the CPU backend: ${why}`);
    return Promise.resolve();
  };
  const settle = () => {
    if (window.crossOriginIsolated) {
      try { sessionStorage.removeItem(RELOADED); } catch { /* nothing to forget */ }
      return goOn(null);
    }
    if (!window.isSecureContext) return goOn("the page is not served over HTTPS, so it cannot have a service worker");
    if (!navigator.serviceWorker) return goOn("this browser offers no service worker (private mode?)");
    let reloaded = false;
    try {
      reloaded = sessionStorage.getItem(RELOADED) === "1";
    } catch {
      return goOn("this page cannot keep a note across one reload (storage is blocked)");
    }
    // Reloaded once already and still not isolated: the worker did not help; never loop.
    if (reloaded) return goOn("the service worker did not make the page cross-origin isolated");
    const script = new URL("isolation-sw.js", document.currentScript.src);
    // Whichever comes first decides: a page that started the app is never reloaded under it.
    let decided = false;
    const decide = (act) => (...args) => {
      if (decided) return new Promise(() => {});
      decided = true;
      return act(...args);
    };
    const reload = navigator.serviceWorker.register(script).then((registration) => {
      // A registration blocked by the browser (or a test) resolves to nothing.
      if (!registration) return decide(goOn)("service workers are blocked here");
      return navigator.serviceWorker.ready.then(decide(() => {
        sessionStorage.setItem(RELOADED, "1");
        location.reload();
        // The app must not start on the load being thrown away.
        return new Promise(() => {});
      }));
    }, (e) => decide(goOn)(`the service worker could not be registered (${e && e.message})`));
    const late = new Promise((resolve) => setTimeout(resolve, WAIT_MS))
      .then(() => decide(goOn)(`the service worker was not ready within ${WAIT_MS} ms`));
    return Promise.race([reload, late]);
  };
  window.clozelabIsolation = settle();
})();

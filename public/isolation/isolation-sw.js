// The service worker that makes the app's page cross-origin isolated where its host cannot send
// the headers itself (GitHub Pages, most static hosts, JATOS): it adds
// Cross-Origin-Opener-Policy and Cross-Origin-Embedder-Policy to the app's own pages and worker
// scripts, the only responses whose headers decide isolation, so that the page, its worker and
// the worker's product helpers may share memory and the CPU backend may use every core. It
// caches nothing and changes no body; every other request (answers sent, JATOS's calls, model
// files) is left to the browser as if there were no service worker. Registered by isolation.js,
// which reloads the page once.

// What a document or worker is loaded from: its response's headers make it isolated or not.
const DECIDE_ISOLATION = new Set(["document", "iframe", "worker", "sharedworker"]);

self.addEventListener("install", () => self.skipWaiting());
self.addEventListener("activate", (event) => event.waitUntil(self.clients.claim()));

self.addEventListener("fetch", (event) => {
  const request = event.request;
  if (request.mode !== "navigate" && !DECIDE_ISOLATION.has(request.destination)) return;
  // Other origins' pages are theirs.
  if (new URL(request.url).origin !== self.location.origin) return;
  // Fetching such a request from a service worker throws (DevTools asks for them).
  if (request.cache === "only-if-cached" && request.mode !== "same-origin") return;
  event.respondWith(fetch(request).then(withIsolationHeaders));
});

function withIsolationHeaders(response) {
  // A redirect followed by hand or an opaque answer cannot be rebuilt; a constructed response
  // would also lose a redirected response's final address, which relative links resolve against.
  if (response.status === 0 || response.type === "opaqueredirect" || response.redirected) return response;
  const headers = new Headers(response.headers);
  headers.set("Cross-Origin-Opener-Policy", "same-origin");
  headers.set("Cross-Origin-Embedder-Policy", "require-corp");
  return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
}

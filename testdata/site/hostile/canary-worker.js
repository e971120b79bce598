// A worker reaches for the canary: fetch, XHR, WebSocket, EventSource, import.
for (const h of ["127.0.0.1:{{CANARY}}", "[::1]:{{CANARY6}}", "rebind.example:{{CANARY}}", "2130706433:{{CANARY}}"]) {
  fetch("http://" + h + "/worker").catch(() => {});
  try { const x = new XMLHttpRequest(); x.open("GET", "http://" + h + "/worker-xhr"); x.send(); } catch (e) {}
  try { new WebSocket("ws://" + h + "/worker-ws"); } catch (e) {}
  try { new EventSource("http://" + h + "/worker-events"); } catch (e) {}
}
try { importScripts("http://127.0.0.1:{{CANARY}}/worker-import.js"); } catch (e) {}

fetch("http://127.0.0.1:{{CANARY}}/worker").catch(() => {});
fetch("http://[::1]:{{CANARY6}}/worker").catch(() => {});
try { new WebSocket("ws://127.0.0.1:{{CANARY}}/worker-ws"); } catch (e) {}

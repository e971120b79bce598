// Runs an app's server renderer: reads {origin, assets, data, routes} on
// standard input, calls the bundle's render(path, ctx) for every route and
// writes [{path, status, html}] to standard output.
import { pathToFileURL } from 'node:url';

const bundle = process.argv[2];
let input = '';
for await (const chunk of process.stdin) {
  input += chunk;
}
const req = JSON.parse(input);
const mod = await import(pathToFileURL(bundle).href);
const out = [];
for (const path of req.routes) {
  const r = await mod.render(path, { origin: req.origin, assets: req.assets, data: req.data });
  out.push({ path, status: r.status || 200, html: r.html });
}
process.stdout.write(JSON.stringify(out));

// Compiles every .svelte file under a folder with Svelte's own compiler,
// for the browser and for the server, keeping each source map inline so
// that esbuild's bundle maps back to the .svelte file.
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';

const [compilerPath, srcDir, outDir] = process.argv.slice(2);
const { compile } = await import(pathToFileURL(compilerPath).href);

function* walk(dir) {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) {
      yield* walk(p);
    } else if (e.name.endsWith('.svelte')) {
      yield p;
    }
  }
}

for (const file of walk(srcDir)) {
  const source = readFileSync(file, 'utf8');
  const rel = relative(srcDir, file);
  for (const generate of ['client', 'server']) {
    const out = join(outDir, generate, rel + '.js');
    const { js } = compile(source, { filename: file, generate, dev: false });
    const map = { ...js.map, sources: [relative(dirname(out), file)], sourcesContent: [source] };
    const inline = Buffer.from(JSON.stringify(map)).toString('base64');
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(out, `${js.code}\n//# sourceMappingURL=data:application/json;base64,${inline}\n`);
  }
}

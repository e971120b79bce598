import { h } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import htm from 'htm';

const html = htm.bind(h);

// The app's own router: the path is state; links push, redirects replace.
let setPathOf = null;
export function go(to, replace) {
  window.history[replace ? 'replaceState' : 'pushState'](null, '', to);
  if (setPathOf) {
    setPathOf(to);
  }
}

function Link({ to, children }) {
  const click = (e) => {
    e.preventDefault();
    go(to, false);
  };
  return html`<a href=${to} onClick=${click}>${children}</a>`;
}

function useTitle(head) {
  useEffect(() => {
    if (!head) {
      return;
    }
    document.title = head.title;
    const meta = document.querySelector('meta[name="description"]') || document.head.appendChild(document.createElement('meta'));
    meta.setAttribute('name', 'description');
    meta.setAttribute('content', head.description);
    const link = document.querySelector('link[rel="canonical"]');
    if (head.canonical) {
      const l = link || document.head.appendChild(document.createElement('link'));
      l.setAttribute('rel', 'canonical');
      l.setAttribute('href', head.canonical);
    } else if (link) {
      link.remove();
    }
  }, [head && head.title]);
}

function JsonLd({ data }) {
  return html`<script type="application/ld+json" dangerouslySetInnerHTML=${{ __html: JSON.stringify(data).replace(/</g, '\\u003c') }}></script>`;
}

export const heads = {
  home: { title: 'Kettle & Co. | Kitchen tools that last', description: 'Kettles, teapots, pans and knives made by hand in a small workshop and repaired for free for ten years.' },
  notFound: { title: 'Page not found | Kettle & Co.', description: 'There is no page at this address.' },
};

function Home({ origin }) {
  useTitle({ ...heads.home, canonical: `${origin}/` });
  return html`
    <h1>Kitchen tools that last</h1>
    <p>We make kettles, teapots, pans and knives in a small workshop by the river. Everything we sell is repaired for free for ten years, and every order ships in plain paper without plastic.</p>
    <p>See <${Link} to="/products">all our products<//>, or write to us for advice on choosing a kettle for your stove.</p>
    <${JsonLd} data=${{ '@context': 'https://schema.org', '@type': 'Organization', name: 'Kettle & Co.', url: `${origin}/` }} />`;
}

function Products({ origin, initial }) {
  const [data, setData] = useState(initial);
  useEffect(() => {
    if (data) {
      return;
    }
    (async () => {
      const site = await (await fetch('/api/site.json')).json();
      const list = await (await fetch('/api/products.json')).json();
      setData({ site, products: list.products });
    })();
  }, []);
  useTitle(data && { title: data.site.title, description: data.site.description, canonical: `${origin}/products` });
  if (!data) {
    return html`<p>Loading products…</p>`;
  }
  const items = data.products.map((p, i) => ({ '@type': 'ListItem', position: i + 1, name: p.name, url: `${origin}/products/${p.slug}` }));
  return html`
    <h1>Our products</h1>
    <ul>${data.products.map((p) => html`<li key=${p.slug}><${Link} to=${`/products/${p.slug}`}>${p.name}<//>: ${p.text} <span>${p.price} euros</span></li>`)}</ul>
    <${JsonLd} data=${{ '@context': 'https://schema.org', '@type': 'ItemList', itemListElement: items }} />`;
}

function Redirect({ to }) {
  useEffect(() => go(to, true), []);
  return null;
}

function NotFound() {
  useTitle(heads.notFound);
  return html`
    <h1>Page not found</h1>
    <p>We could not find that page. <${Link} to="/products">Browse our products<//> instead.</p>`;
}

export function kind(path) {
  return { '/': 'home', '/products': 'products', '/old-products': 'redirect' }[path] || 'not-found';
}

export function App({ path: first, origin, initial }) {
  const [path, setPath] = useState(first);
  setPathOf = setPath;
  useEffect(() => {
    const pop = () => setPath(window.location.pathname);
    window.addEventListener('popstate', pop);
    return () => window.removeEventListener('popstate', pop);
  }, []);
  const page = {
    home: () => html`<${Home} origin=${origin} />`,
    products: () => html`<${Products} origin=${origin} initial=${initial} />`,
    redirect: () => html`<${Redirect} to="/products" />`,
    'not-found': () => html`<${NotFound} />`,
  }[kind(path)]();
  return html`
    <header><nav><${Link} to="/">Home<//> <${Link} to="/products">Products<//></nav></header>
    <main>${page}</main>
    <footer><p>Kettle & Co. is built with Preact and htm.</p></footer>`;
}

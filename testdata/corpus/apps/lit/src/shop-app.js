import { LitElement, html } from 'lit';

export const heads = {
  home: { title: 'Kettle & Co. | Kitchen tools that last', description: 'Kettles, teapots, pans and knives made by hand in a small workshop and repaired for free for ten years.' },
  notFound: { title: 'Page not found | Kettle & Co.', description: 'There is no page at this address.' },
};

export function kind(path) {
  return { '/': 'home', '/products': 'products', '/old-products': 'redirect' }[path] || 'not-found';
}

// ShopApp is the whole app: a router over its path, in its shadow root.
export class ShopApp extends LitElement {
  static properties = { path: { type: String }, origin: { type: String }, data: { attribute: false } };

  constructor() {
    super();
    this.path = typeof window === 'undefined' ? '/' : window.location.pathname;
    this.origin = typeof window === 'undefined' ? '' : window.location.origin;
    this.data = typeof window === 'undefined' ? null : window.__INITIAL_DATA__ || null;
  }

  connectedCallback() {
    super.connectedCallback();
    if (typeof window === 'undefined') {
      return;
    }
    window.addEventListener('popstate', () => { this.path = window.location.pathname; });
    if (kind(this.path) === 'products' && !this.data) {
      this.load();
    }
  }

  firstUpdated() {
    // After the first render, which hydration matches to the server's.
    if (kind(this.path) === 'redirect') {
      this.go('/products', true);
    }
  }

  async load() {
    const site = await fetch('/api/site.json').then((r) => r.json());
    const list = await fetch('/api/products.json').then((r) => r.json());
    this.data = { site, products: list.products };
  }

  go(to, replace) {
    window.history[replace ? 'replaceState' : 'pushState'](null, '', to);
    this.path = to;
    if (kind(to) === 'products' && !this.data) {
      this.load();
    }
  }

  click(e) {
    const a = e.composedPath().find((n) => n.localName === 'a');
    if (a && a.getAttribute('href').startsWith('/')) {
      e.preventDefault();
      this.go(a.getAttribute('href'), false);
    }
  }

  updated() {
    const k = kind(this.path);
    let head = k === 'home' ? { ...heads.home, canonical: `${this.origin}/` } : heads.notFound;
    if (k === 'products') {
      head = this.data ? { title: this.data.site.title, description: this.data.site.description, canonical: `${this.origin}/products` } : null;
    }
    if (head && k !== 'redirect') {
      writeHead(head, k === 'products' && this.data ? itemList(this.origin, this.data.products) : k === 'home' ? organization(this.origin) : null);
    }
  }

  page() {
    switch (kind(this.path)) {
      case 'home':
        return html`<h1>Kitchen tools that last</h1>
          <p>We make kettles, teapots, pans and knives in a small workshop by the river. Everything we sell is repaired for free for ten years, and every order ships in plain paper without plastic.</p>
          <p>See <a href="/products">all our products</a>, or write to us for advice on choosing a kettle for your stove.</p>`;
      case 'products':
        if (!this.data) {
          return html`<p>Loading products…</p>`;
        }
        return html`<h1>Our products</h1>
          <ul>${this.data.products.map((p) => html`<li><a href="/products/${p.slug}">${p.name}</a>: ${p.text} <span>${p.price} euros</span></li>`)}</ul>`;
      case 'redirect':
        return html``;
      default:
        return html`<h1>Page not found</h1>
          <p>We could not find that page. <a href="/products">Browse our products</a> instead.</p>`;
    }
  }

  render() {
    return html`<header @click=${this.click}><nav><a href="/">Home</a> <a href="/products">Products</a></nav></header>
      <main @click=${this.click}>${this.page()}</main>
      <footer><p>Kettle &amp; Co. is built with Lit.</p></footer>`;
  }
}

function organization(origin) {
  return { '@context': 'https://schema.org', '@type': 'Organization', name: 'Kettle & Co.', url: `${origin}/` };
}

function itemList(origin, products) {
  return {
    '@context': 'https://schema.org',
    '@type': 'ItemList',
    itemListElement: products.map((p, i) => ({ '@type': 'ListItem', position: i + 1, name: p.name, url: `${origin}/products/${p.slug}` })),
  };
}

// writeHead keeps the document's head in step with the page shown.
function writeHead(head, ld) {
  document.title = head.title;
  let meta = document.head.querySelector('meta[name="description"]');
  if (!meta) {
    meta = document.createElement('meta');
    meta.name = 'description';
    document.head.append(meta);
  }
  meta.content = head.description;
  let link = document.head.querySelector('link[rel="canonical"]');
  if (head.canonical && !link) {
    link = document.createElement('link');
    link.rel = 'canonical';
    document.head.append(link);
  }
  if (link) {
    if (head.canonical) link.href = head.canonical;
    else link.remove();
  }
  let script = document.head.querySelector('script[type="application/ld+json"]');
  if (ld) {
    if (!script) {
      script = document.createElement('script');
      script.type = 'application/ld+json';
      document.head.append(script);
    }
    script.textContent = JSON.stringify(ld);
  } else if (script) {
    script.remove();
  }
}

export { organization, itemList };

if (typeof customElements !== 'undefined' && !customElements.get('shop-app')) {
  customElements.define('shop-app', ShopApp);
}

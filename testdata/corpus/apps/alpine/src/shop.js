// The shop's Alpine data: which page the path is, the head fields of each,
// and the products fetched for the product list.
document.addEventListener('alpine:init', () => {
  window.Alpine.data('shop', () => ({
    route: 'loading',
    site: null,
    products: [],

    async boot() {
      const path = window.location.pathname;
      this.route = { '/': 'home', '/products': 'products', '/old-products': 'old-products' }[path] || 'not-found';
      if (this.route === 'home') {
        this.head('Kettle & Co. | Kitchen tools that last', 'Kettles, teapots, pans and knives made by hand in a small workshop and repaired for free for ten years.', '/');
        this.jsonld({ '@context': 'https://schema.org', '@type': 'Organization', name: 'Kettle & Co.', url: `${window.location.origin}/` });
      } else if (this.route === 'not-found') {
        this.head('Page not found | Kettle & Co.', 'There is no page at this address.', null);
      } else if (this.route === 'products') {
        const site = await (await fetch('/api/site.json')).json();
        const list = await (await fetch('/api/products.json')).json();
        this.site = site;
        this.products = list.products;
        this.head(site.title, site.description, '/products');
        this.jsonld({
          '@context': 'https://schema.org',
          '@type': 'ItemList',
          itemListElement: list.products.map((p, i) => ({ '@type': 'ListItem', position: i + 1, name: p.name, url: `${window.location.origin}/products/${p.slug}` })),
        });
      }
    },

    head(title, description, path) {
      document.title = title;
      const meta = document.createElement('meta');
      meta.name = 'description';
      meta.content = description;
      document.head.appendChild(meta);
      if (path) {
        const link = document.createElement('link');
        link.rel = 'canonical';
        link.href = window.location.origin + path;
        document.head.appendChild(link);
      }
    },

    jsonld(data) {
      const s = document.createElement('script');
      s.type = 'application/ld+json';
      s.textContent = JSON.stringify(data);
      document.head.appendChild(s);
    },
  }));
});

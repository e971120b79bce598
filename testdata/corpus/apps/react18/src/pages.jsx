import React, { useEffect, useState } from 'react';
import { heads, useHead } from './head.js';
import { Link } from './router.js';

function JsonLd({ data }) {
  const json = JSON.stringify(data).replace(/</g, '\\u003c');
  return <script type="application/ld+json" dangerouslySetInnerHTML={{ __html: json }} />;
}

export function Home({ origin }) {
  useHead({ ...heads['/'], canonical: `${origin}/` });
  return (
    <>
      <h1>Kitchen tools that last</h1>
      <p>
        We make kettles, teapots, pans and knives in a small workshop by the river. Everything we sell is
        repaired for free for ten years, and every order ships in plain paper without plastic.
      </p>
      <p>
        See <Link to="/products">all our products</Link>, or write to us for advice on choosing a kettle for
        your stove.
      </p>
      <JsonLd data={{ '@context': 'https://schema.org', '@type': 'Organization', name: 'Kettle & Co.', url: `${origin}/` }} />
    </>
  );
}

export function Products({ origin, initial }) {
  const [data, setData] = useState(initial || null);
  useEffect(() => {
    if (data) {
      return;
    }
    fetch('/api/site.json')
      .then((r) => r.json())
      .then((site) => fetch('/api/products.json').then((r) => r.json()).then((list) => setData({ site, products: list.products })));
  }, [data]);
  useHead(data ? { title: data.site.title, description: data.site.description, canonical: `${origin}/products` } : { title: 'Loading… | Kettle & Co.', description: '' });
  if (!data) {
    return <p>Loading products…</p>;
  }
  return (
    <>
      <h1>Our products</h1>
      <ul>
        {data.products.map((p) => (
          <li key={p.slug}>
            <Link to={`/products/${p.slug}`}>{p.name}</Link>: {p.text} <span>{p.price} euros</span>
          </li>
        ))}
      </ul>
      <JsonLd
        data={{
          '@context': 'https://schema.org',
          '@type': 'ItemList',
          itemListElement: data.products.map((p, i) => ({ '@type': 'ListItem', position: i + 1, name: p.name, url: `${origin}/products/${p.slug}` })),
        }}
      />
    </>
  );
}

export function NotFound() {
  useHead(heads.notFound);
  return (
    <>
      <h1>Page not found</h1>
      <p>
        We could not find that page. <Link to="/products">Browse our products</Link> instead.
      </p>
    </>
  );
}

import { useContext, useEffect, useState } from 'react';
import { Link } from 'react-router';
import { getJSON } from './api.js';
import { JsonLd, Seo, StatusContext, origin } from './Seo.jsx';

export function Home() {
  return (
    <>
      <Seo
        title="Kettle & Co. | Kitchen tools that last"
        description="Kettles, teapots, pans and knives made by hand in a small workshop and repaired for free for ten years."
        path="/"
      />
      <h1>Kitchen tools that last</h1>
      <p>
        We make kettles, teapots, pans and knives in a small workshop by the river. Everything we sell is
        repaired for free for ten years, and every order ships in plain paper without plastic.
      </p>
      <p>
        See <Link to="/products">all our products</Link>, or write to us for advice on choosing a kettle for
        your stove.
      </p>
      <JsonLd data={{ '@context': 'https://schema.org', '@type': 'Organization', name: 'Kettle & Co.', url: origin() + '/' }} />
    </>
  );
}

export function Products({ initial }) {
  const [data, setData] = useState(initial ?? null);
  useEffect(() => {
    if (data) {
      return undefined;
    }
    let live = true;
    (async () => {
      const site = await getJSON('/api/site.json');
      const list = await getJSON('/api/products.json');
      if (live) {
        setData({ site, products: list.products });
      }
    })();
    return () => {
      live = false;
    };
  }, [data]);
  if (!data) {
    return <p>Loading products…</p>;
  }
  const items = data.products.map((p, i) => ({
    '@type': 'ListItem', position: i + 1, name: p.name, url: `${origin()}/products/${p.slug}`,
  }));
  return (
    <>
      <Seo title={data.site.title} description={data.site.description} path="/products" />
      <h1>Our products</h1>
      <ul>
        {data.products.map((p) => (
          <li key={p.slug}>
            <Link to={`/products/${p.slug}`}>{p.name}</Link>: {p.text} <span>{p.price} euros</span>
          </li>
        ))}
      </ul>
      <JsonLd data={{ '@context': 'https://schema.org', '@type': 'ItemList', itemListElement: items }} />
    </>
  );
}

export function NotFound() {
  const status = useContext(StatusContext);
  if (status) {
    status.code = 404;
  }
  return (
    <>
      <Seo title="Page not found | Kettle & Co." description="There is no page at this address." path={null} />
      <h1>Page not found</h1>
      <p>
        We could not find that page. <Link to="/products">Browse our products</Link> instead.
      </p>
    </>
  );
}

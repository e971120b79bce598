import React from 'react';
import { Home, NotFound, Products } from './pages.jsx';
import { Link, Redirect, usePath } from './router.js';

export function route(path) {
  if (path === '/') {
    return 'home';
  }
  if (path === '/products') {
    return 'products';
  }
  if (path === '/old-products') {
    return 'old-products';
  }
  return 'not-found';
}

export function App({ path: first, origin, initial }) {
  const path = usePath(first);
  let page;
  switch (route(path)) {
    case 'home':
      page = <Home origin={origin} />;
      break;
    case 'products':
      page = <Products origin={origin} initial={initial} />;
      break;
    case 'old-products':
      page = <Redirect to="/products" />;
      break;
    default:
      page = <NotFound />;
  }
  return (
    <>
      <header>
        <nav>
          <Link to="/">Home</Link> <Link to="/products">Products</Link>
        </nav>
      </header>
      <main>{page}</main>
      <footer>
        <p>Kettle &amp; Co. is built with React 18.</p>
      </footer>
    </>
  );
}

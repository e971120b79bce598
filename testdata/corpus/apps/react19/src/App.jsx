import { Link, Navigate, Route, Routes } from 'react-router';
import { Home, NotFound, Products } from './pages.jsx';

export function App({ initial }) {
  return (
    <>
      <header>
        <nav aria-label="Main">
          <Link to="/">Home</Link> <Link to="/products">Products</Link>
        </nav>
      </header>
      <main>
        <Routes>
          <Route path="/" element={<Home />} />
          <Route path="/products" element={<Products initial={initial} />} />
          <Route path="/old-products" element={<Navigate to="/products" replace />} />
          <Route path="*" element={<NotFound />} />
        </Routes>
      </main>
      <footer>
        <p>Kettle &amp; Co. is built with React 19 and React Router.</p>
      </footer>
    </>
  );
}

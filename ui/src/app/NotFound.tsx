import { Link } from 'wouter';

export function NotFound() {
  return (
    <section className="page">
      <h1>Page not found</h1>
      <p>
        <Link href="/applications">Back to the Applications</Link>
      </p>
    </section>
  );
}

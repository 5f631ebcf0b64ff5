// Dark and light themes: CSS variables keyed by data-theme on <html>; the first choice follows the
// system, a click remembers the user's choice (a preference, never a secret).
import { useEffect, useState } from 'react';

export type Theme = 'light' | 'dark';
const KEY = 'capstan-theme';

export function initialTheme(): Theme {
  const saved = typeof localStorage === 'undefined' ? null : localStorage.getItem(KEY);
  if (saved === 'light' || saved === 'dark') return saved;
  return typeof matchMedia !== 'undefined' && matchMedia('(prefers-color-scheme: dark)').matches
    ? 'dark'
    : 'light';
}

export function ThemeToggle() {
  const [theme, setTheme] = useState<Theme>(initialTheme);
  useEffect(() => {
    document.documentElement.dataset.theme = theme;
  }, [theme]);
  const next: Theme = theme === 'dark' ? 'light' : 'dark';
  return (
    <button
      type="button"
      className="button ghost"
      aria-label={`switch to ${next} theme`}
      onClick={() => {
        localStorage.setItem(KEY, next);
        setTheme(next);
      }}
    >
      {theme === 'dark' ? '☀' : '☾'}
    </button>
  );
}

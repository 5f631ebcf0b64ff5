import { afterEach, describe, expect, it } from 'vitest';
import { render, screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { ThemeToggle, initialTheme } from './theme';

describe('theme toggle', () => {
  afterEach(() => localStorage.clear());

  it('switches between light and dark from the keyboard and remembers the choice', async () => {
    const user = userEvent.setup();
    localStorage.setItem('capstan-theme', 'light');
    render(<ThemeToggle />);
    const toggle = screen.getByRole('button', { name: 'switch to dark theme' });
    toggle.focus();
    await user.keyboard('{Enter}');
    expect(document.documentElement.dataset.theme).toBe('dark');
    expect(localStorage.getItem('capstan-theme')).toBe('dark');
    expect(initialTheme()).toBe('dark');
    await user.click(screen.getByRole('button', { name: 'switch to light theme' }));
    expect(document.documentElement.dataset.theme).toBe('light');
  });

  it("follows the system's choice first", () => {
    expect(initialTheme()).toBe('light'); // jsdom has no matchMedia: light
  });
});

// One lint setup for the whole workspace. Besides the recommended rules it enforces the
// architectural rules of docs/architecture.md ("Libraries"): no import cycles, no deep imports into another package's src/
// and no relative path into another package (packages meet at their public entry points and at
// event/proto contracts), and in services, no import of another service.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import importX from 'eslint-plugin-import-x';
import globals from 'globals';

const entryPointsOnly = [
  {
    group: ['@capstan/*/src/*', '@capstan/*/dist/*'],
    message: 'import the package entry point, not its internals',
  },
  {
    group: [
      '../../libs/*',
      '../../services/*',
      '../../../libs/*',
      '../../../services/*',
      '../../cli/*',
      '../../../cli/*',
    ],
    message: 'packages meet at their entry points: import @capstan/<pkg>',
  },
];

const servicesApart = {
  group: ['@capstan/api', '@capstan/sync', '@capstan/repo', '@capstan/appset'],
  message: 'services never import each other: meet at event and proto contracts',
};

export default tseslint.config(
  {
    ignores: [
      '**/dist/**',
      '**/node_modules/**',
      '**/.turbo/**',
      '**/gen/**',
      'bench/results/**',
      '**/.vitest/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  { languageOptions: { globals: { ...globals.node } } },
  {
    files: ['**/*.ts'],
    plugins: { 'import-x': importX },
    settings: { 'import-x/resolver': { node: { extensions: ['.ts', '.js'] } } },
    rules: {
      'import-x/no-cycle': ['error', { maxDepth: 10 }],
      'import-x/no-relative-packages': 'error',
      'no-restricted-imports': ['error', { patterns: entryPointsOnly }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
    },
  },
  {
    // A rule's options are replaced, not merged, by a later block: the services' list repeats the
    // workspace's patterns and adds its own.
    files: ['services/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [servicesApart, ...entryPointsOnly] }],
    },
  },
  {
    // Every package's vitest config extends the workspace root's shared settings (vitest.shared.ts),
    // which belong to no package's API.
    files: ['**/vitest.config.ts'],
    rules: { 'import-x/no-relative-packages': 'off' },
  },
);

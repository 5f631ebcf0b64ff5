// One lint setup for the whole workspace. Besides the recommended rules it enforces the two
// architectural rules from DESIGN.md: no import cycles, and no deep imports into another
// package's src/ (packages meet at their public entry points and at event/proto contracts).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import importX from 'eslint-plugin-import-x';
import globals from 'globals';

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', '**/.turbo/**', '**/gen/**', 'bench/results/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  { languageOptions: { globals: { ...globals.node } } },
  {
    files: ['**/*.ts'],
    plugins: { 'import-x': importX },
    settings: { 'import-x/resolver': { node: { extensions: ['.ts', '.js'] } } },
    rules: {
      'import-x/no-cycle': ['error', { maxDepth: 10 }],
      'no-restricted-imports': [
        'error',
        {
          patterns: [
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
          ],
        },
      ],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
    },
  },
  {
    files: ['services/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['@capstan/api', '@capstan/sync', '@capstan/repo', '@capstan/appset'],
              message: 'services never import each other: meet at event and proto contracts',
            },
            {
              group: ['@capstan/*/src/*', '@capstan/*/dist/*'],
              message: 'import the package entry point, not its internals',
            },
          ],
        },
      ],
    },
  },
);

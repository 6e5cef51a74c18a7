import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      'node_modules/**',
      'dist/**',
      'dist.next-*/**',
      'dist.previous-*/**',
      'packages/sdk/dist/**',
      '.purser/**',
      'bench/results/**',
      'devnet/build/**',
      'scratch/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-restricted-syntax': [
        'error',
        {
          selector: "CallExpression[callee.object.name='Date'][callee.property.name='now']",
          message: 'Use the clock port (deps.clock.now()) instead of Date.now().',
        },
      ],
    },
  },
  {
    files: [
      'src/core/clock.ts',
      'test/**',
      'bench/**',
      'src/**/*.test.ts',
      'devnet/**',
      'packages/**',
      'examples/**',
      // The console runs in the browser, where there is no clock port to inject.
      'console/**',
    ],
    rules: { 'no-restricted-syntax': 'off' },
  },
  {
    // The package's plain JavaScript entry points run on Node.
    files: ['bin/**/*.js'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly', performance: 'readonly' } },
  },
);

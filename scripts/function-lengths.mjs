// Holds every function in src/ to CONTRIBUTING's limit as a reader counts it: its non-blank lines,
// comments included (Biome's own rule skips comment lines, so a function can pass it while a reader
// scrolls through far more). A Pothos registration in src/graphql/types/ may be twice as long.
// Usage: node scripts/function-lengths.mjs   (exit 1 naming each function over its limit)
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SOURCE = join(ROOT, 'src');
const SKIPPED = ['generated'];
const LIMIT = 60;
const POTHOS_LIMIT = 120;

function sourceFiles(folder) {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) return SKIPPED.includes(entry.name) ? [] : sourceFiles(path);
    return /\.tsx?$/.test(entry.name) && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

function nameOf(node, file) {
  if (node.name && ts.isIdentifier(node.name)) return node.name.text;
  if (ts.isConstructorDeclaration(node)) return 'constructor';
  const parent = node.parent;
  if (parent && ts.isVariableDeclaration(parent) && ts.isIdentifier(parent.name)) return parent.name.text;
  if (parent && ts.isPropertyAssignment(parent)) return parent.name.getText(file);
  return '(anonymous)';
}

function nonBlankLines(text, start, end) {
  return text
    .slice(start, end)
    .split('\n')
    .filter((line) => line.trim() !== '').length;
}

function longFunctions(path) {
  const text = readFileSync(path, 'utf8');
  const file = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true);
  const where = relative(ROOT, path);
  const limit = where.startsWith('src/graphql/types/') ? POTHOS_LIMIT : LIMIT;
  const found = [];
  const visit = (node) => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const lines = nonBlankLines(text, node.getStart(file), node.getEnd());
      if (lines > limit) {
        const line = file.getLineAndCharacterOfPosition(node.getStart(file)).line + 1;
        found.push(`${where}:${line} ${nameOf(node, file)}: ${lines} lines (limit ${limit})`);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return found;
}

const over = sourceFiles(SOURCE).flatMap(longFunctions);
if (over.length > 0) {
  console.error(
    `Functions over their length, counting comment lines (CONTRIBUTING, Conventions):\n${over.join('\n')}`,
  );
  process.exitCode = 1;
}

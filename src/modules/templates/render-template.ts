export interface TemplateFields {
  name: string | null;
  phone: string;
  email: string | null;
  document: string | null;
  tags: string[];
}

/** `{{name}}`, `{{ name }}`: a placeholder, spaces inside the braces allowed. */
export const PLACEHOLDER = /\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g;

/** The distinct placeholder names of a content, in order of first appearance. */
export function placeholderNames(content: string): string[] {
  return [...new Set(Array.from(content.matchAll(PLACEHOLDER), (match) => match[1]!))];
}

/**
 * A `{{` or `}}` outside every valid placeholder is a placeholder gone wrong (`Hi {{name`,
 * `{{ }}`), which dispatch would send as written. Placeholders are replaced by a space rather
 * than removed, so that the text on either side cannot join into a `{{` it does not contain.
 */
export function hasStrayDoubleBraces(content: string): boolean {
  const text = content.replace(PLACEHOLDER, ' ');
  return text.includes('{{') || text.includes('}}');
}

/**
 * A template's text for one contact: the five contact placeholders are filled (empty when
 * the contact lacks the field, tags joined with ", "); any other placeholder stays as written.
 */
export function renderTemplate(content: string, fields: TemplateFields): string {
  return content.replace(PLACEHOLDER, (placeholder, name: string) => {
    switch (name) {
      case 'name':
        return fields.name ?? '';
      case 'phone':
        return fields.phone;
      case 'email':
        return fields.email ?? '';
      case 'document':
        return fields.document ?? '';
      case 'tags':
        return fields.tags.join(', ');
      default:
        return placeholder;
    }
  });
}

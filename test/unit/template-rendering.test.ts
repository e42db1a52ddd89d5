import { describe, expect, it } from 'vitest';
import {
  hasStrayDoubleBraces,
  placeholderNames,
  renderTemplate,
} from '../../src/modules/templates/render-template.js';

const contact = {
  name: 'Ana',
  phone: '5511999990000',
  email: 'ana@example.com',
  document: '123',
  tags: ['vip', 'sp'],
};

describe('template rendering', () => {
  it('fills the five contact placeholders, spaces inside the braces allowed', () => {
    expect(renderTemplate('Hi {{name}} ({{ phone }}), {{email}} {{document}} [{{tags}}]', contact)).toBe(
      'Hi Ana (5511999990000), ana@example.com 123 [vip, sp]',
    );
  });

  it('leaves a placeholder empty when the contact lacks the field, and an unknown one as written', () => {
    const bare = { name: null, phone: '5511999990000', email: null, document: null, tags: [] };
    expect(renderTemplate('Hi {{name}}!{{email}}{{tags}} {{coupon}} {{ coupon }}', bare)).toBe(
      'Hi ! {{coupon}} {{ coupon }}',
    );
  });

  it('lists the distinct placeholder names in order of first appearance', () => {
    expect(placeholderNames('{{b}} {{a}} {{ b }} {{c_1}} {{1x}}')).toEqual(['b', 'a', 'c_1']);
  });

  it('finds braces that belong to no placeholder', () => {
    expect(hasStrayDoubleBraces('Hi {{name}}, {{ tags }}')).toBe(false);
    expect(hasStrayDoubleBraces('Hi {{name')).toBe(true);
    expect(hasStrayDoubleBraces('Hi name}}')).toBe(true);
    expect(hasStrayDoubleBraces('{{ }}')).toBe(true);
    // Removing the placeholder must not make the braces around it look balanced.
    expect(hasStrayDoubleBraces('{{{{name}}}}')).toBe(true);
  });
});

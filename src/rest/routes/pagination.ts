/** The list parameters every paginated route takes. */
export const PAGE_QUERY = { page: 'page', per_page: 'perPage' } as const;

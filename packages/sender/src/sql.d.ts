/** Migrations are `.sql` files, bundled as text (tsup's `text` loader; a plugin in the tests). */
declare module '*.sql' {
  const text: string;
  export default text;
}

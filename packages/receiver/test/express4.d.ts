/** Express 4, installed as `express4` beside Express 5 for the adapter's tests: typed as Express (what they use of it is the same in both). */
declare module 'express4' {
  import express from 'express';
  export default express;
}

-- Migration 3 left 15% of each deliveries page free so that a claim's write of the lease expiry
-- could stay on its page (a HOT update). Migration 15 took that write away, and every update left
-- (an attempt's record, a hold, a resume, a retry now) changes an indexed column, so none can be
-- a HOT update: new pages are filled again. Pages already written keep their free space.
ALTER TABLE deliveries RESET (fillfactor);

-- Deleted accounts (design D37): a deletion is written here when it starts, and kept, so a publish
-- for the account is refused during the deletion and after its row is gone.
CREATE TABLE deleted_accounts (
  id TEXT COLLATE "C" PRIMARY KEY,
  deleted_at BIGINT NOT NULL
);

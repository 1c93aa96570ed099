-- Runs of edits not saved yet (ctrl+r in the app runs what is on screen). They show in
-- the problem's run history, labelled, but never count as the reference's result: not
-- for `ready`, release gates, baselines, timeouts or which samples are scored.
ALTER TABLE runs ADD COLUMN unsaved INTEGER NOT NULL DEFAULT 0;

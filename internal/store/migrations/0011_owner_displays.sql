-- Each process announces the X displays it serves (comma-separated), so
-- any daemon of a fleet can list every host with its displays.
ALTER TABLE owners ADD COLUMN displays TEXT NOT NULL DEFAULT '';

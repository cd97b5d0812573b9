-- Each process records the id of the machine it runs on (/etc/machine-id,
-- or one generated in its data directory), so a process whose ACU_HOST_ID
-- is already held by a live process of another machine (cloned VMs share
-- a host name) refuses to start instead of taking that machine's runs.
ALTER TABLE owners ADD COLUMN machine TEXT NOT NULL DEFAULT '';

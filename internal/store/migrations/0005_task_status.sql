-- A task's status (the agent's own word for it: active, paused, completed,
-- failed, cancelled), for task_update and task_list of DETM's tools.

ALTER TABLE tasks ADD COLUMN status TEXT NOT NULL DEFAULT 'active';

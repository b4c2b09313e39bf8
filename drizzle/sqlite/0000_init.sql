CREATE TABLE `idempotency_records` (
	`scope` text NOT NULL,
	`key` text NOT NULL,
	`fingerprint` text NOT NULL,
	`operation` text NOT NULL,
	`state` text NOT NULL,
	`token` text NOT NULL,
	`outcome` text,
	`result` text,
	`lease_expires_at` integer,
	`expires_at` integer NOT NULL,
	`created_at` integer NOT NULL,
	`completed_at` integer,
	PRIMARY KEY(`scope`, `key`),
	CONSTRAINT "idempotency_records_state_check" CHECK("idempotency_records"."state" in ('in_flight', 'complete')),
	CONSTRAINT "idempotency_records_outcome_check" CHECK("idempotency_records"."outcome" is null or "idempotency_records"."outcome" in ('committed', 'rolled_back'))
);
--> statement-breakpoint
CREATE INDEX `idempotency_records_expires_at_idx` ON `idempotency_records` (`expires_at`);
CREATE TABLE `idempotency_records` (
	`scope` text NOT NULL,
	`key` text NOT NULL,
	`fingerprint` text NOT NULL,
	`operation` text NOT NULL,
	`outcome` text NOT NULL,
	`result` text NOT NULL,
	`expires_at` integer NOT NULL,
	`created_at` integer NOT NULL,
	`completed_at` integer NOT NULL,
	PRIMARY KEY(`scope`, `key`),
	CONSTRAINT "idempotency_records_outcome_check" CHECK("idempotency_records"."outcome" in ('committed', 'rolled_back'))
);
--> statement-breakpoint
CREATE INDEX `idempotency_records_expires_at_idx` ON `idempotency_records` (`expires_at`);
-- +goose Up
-- PostgreSQL's calendar revision triggers run per statement from this
-- version (see postgres/00026). SQLite's stay per row: they run in the
-- writing process, without a procedural language, and take no revision at
-- commit (one writer at a time); the number keeps both engines' schemas at
-- the same version.
SELECT 1;

-- +goose Down
SELECT 1;

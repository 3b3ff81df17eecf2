#!/bin/sh
echo tidy

"""defaultpreemption plugin."""
